/*
 * Following forks in the kernel (uprobe-bpf.h's ubpf_follow_forks): at
 * every fork on the system (the raw tracepoint sched_process_fork, run by
 * the parent before the child is first scheduled), when the parent's
 * process is in the family, the child's process joins it. A new thread
 * (the same tgid) adds nothing. The child's tgid is read where this
 * kernel keeps it: libbpf relocates the read by the kernel's BTF.
 */
#include <linux/bpf.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "perf/bpf/family.h"

struct task_struct {
	int tgid;
} __attribute__((preserve_access_index));

SEC("raw_tp/sched_process_fork")
int recce_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32, one = 1;
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	int tgid;

	if (!bpf_map_lookup_elem(&family, &parent))
		return 0;
	if (bpf_core_read(&tgid, sizeof(tgid), &child->tgid) != 0 || (__u32)tgid == parent)
		return 0;
	__u32 key = tgid;
	bpf_map_update_elem(&family, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
