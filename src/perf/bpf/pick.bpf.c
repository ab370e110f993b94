/*
 * Per-CPU sampling kept to chosen processes (pick-bpf.h): run at every
 * cpu-clock sample of a CPU, before perf writes it, the program lets the
 * sample be written only when the thread on the CPU is of a process in
 * the family (family.h). The idle task's samples and every other
 * process's are dropped in the kernel, unwritten.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

#include "perf/bpf/family.h"

SEC("perf_event")
int recce_pick(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	(void)ctx;
	return bpf_map_lookup_elem(&family, &tgid) != 0;
}

char LICENSE[] SEC("license") = "GPL"; /* the helpers used are GPL-only */
