/*
 * The Python frame program (py-bpf.h), in BPF C. It runs at every
 * sample of a sampled thread (cpu-clock, or a switch off the CPU), before perf writes the sample:
 * for a thread of a process user space named as a CPython (layouts), it
 * reads the chain of frames from the current one outwards (py-walk.h),
 * and writes each frame's code object,
 * instruction, module name and qualified name (their str objects) to the ring, with the times it
 * ran at, so user space can put the record beside the sample perf writes next. It lets the sample
 * be written, unless a family is given and the process is not in it. The maps are made by user
 * space and put in place of these before loading.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

#include "perf/bpf/family.h"
#include "perf/py-format.h"

/* Only the samples of processes in family are written (per-CPU events
 * of chosen processes, pick-bpf.h); else every sample is. */
const volatile int family_only = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_bpf_record);
} scratch SEC(".maps");

/* Records the ring had no room for. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} out SEC(".maps");

#define PY_WALK_FRAMES PY_BPF_FRAMES

/* Row n of the record being written. */
static __always_inline __u64 *py_walk_row(__u32 n)
{
	__u32 zero = 0;
	struct py_bpf_record *rec = bpf_map_lookup_elem(&scratch, &zero);

	return rec ? rec->frames[n & (PY_BPF_FRAMES - 1)] : 0;
}

#include "perf/bpf/py-walk.h"

SEC("perf_event")
int recce_py(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0;
	if (family_only && !bpf_map_lookup_elem(&family, &pid))
		return 0;
	const struct py_bpf_layout *L = bpf_map_lookup_elem(&layouts, &pid);

	if (!L)
		return 1;
	struct py_bpf_record *rec = bpf_map_lookup_elem(&scratch, &zero);
	if (!rec)
		return 1;
	rec->time = bpf_ktime_get_ns();
	rec->pid = pid;
	rec->tid = tid;

	__u32 flags = 0, n = py_walk(L, tid, PY_WALK_STEPS, &flags);
	rec->flags = flags;
	rec->n = n;
	__u64 size = sizeof(*rec) - sizeof(rec->frames) + (__u64)n * sizeof(rec->frames[0]);
	rec->time_end = bpf_ktime_get_ns();
	if (size > sizeof(*rec))
		size = sizeof(*rec);
	/* No wakeup: user space reads the ring when the samples' rings or its
	 * timer wake it, and a wakeup is an interrupt of this CPU. */
	if (bpf_ringbuf_output(&out, rec, size, BPF_RB_NO_WAKEUP) != 0) {
		__u64 *dropped = bpf_map_lookup_elem(&drops, &zero);
		if (dropped)
			__sync_fetch_and_add(dropped, 1);
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL"; /* the helpers used are GPL-only */
