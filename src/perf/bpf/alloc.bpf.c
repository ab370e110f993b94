/*
 * The allocation sampling program (alloc-bpf.h), in BPF C. It runs at the
 * entry of every probed allocator function and, for the calls it samples,
 * at their return (a uprobe session: returning 0 at entry asks for the
 * return). It tells the two apart by the instruction pointer: at a
 * return it is the return address the entry run kept for the thread.
 * Without sessions, it runs at every return too, from a return link whose
 * cookies say so (ALLOC_FN_AT_RETURN), and leaves those of the calls it
 * did not sample. There a return is told by the stack pointer: a call
 * reached by a tail call from another probed function (glibc's realloc
 * jumps to malloc) finds at its entry a return address the kernel already
 * replaced with its trampoline, but returns with the stack as the outer
 * call would have; its real return address is the one the outer call's
 * entry found (tail).
 *
 * Sampling is a countdown of bytes per CPU (left), restarted from a
 * random draw of a table user space fills (draws), in the processes whose
 * probes are all in (armed): while a process's functions are probed, or
 * their probes taken out, one after another, those in would be sampled
 * alone. The maps are made by user space and put in place of these
 * before loading.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>

#include <bpf/bpf_helpers.h>

#include "perf/alloc-format.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} left SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ALLOC_DRAWS);
	__type(key, __u32);
	__type(value, __s64);
} draws SEC(".maps");

/* A thread inside a sampled call: where the call returns to, and
 * posix_memalign's result pointer (0 for the others); the stack pointer
 * it returns with. */
struct pending {
	__u64 ret;
	__u64 result;
	__u64 sp;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct pending);
} pending SEC(".maps");

/* Without sessions: where glibc's call, left to malloc's probe, returns
 * to, as its entry found it, for a malloc it jumps to with the same stack
 * (whose return address the kernel has replaced by then). */
struct tail {
	__u64 sp;
	__u64 ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct tail);
} tail SEC(".maps");

/* The processes whose probes are all in (tgid -> 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} armed SEC(".maps");

/* Sampled allocations still in use (address -> 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
} live SEC(".maps");

static __always_inline void output(struct pt_regs *ctx, __u64 event, __u64 value, __u64 caller,
				   __u64 stacked)
{
	struct alloc_raw rec = {
	    .event = event, .value = value, .caller = caller, .stacked = stacked};

	bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, &rec, sizeof(rec));
}

/* The pointer in the first argument, if it is a sampled allocation, is
 * one no more: take it out of live and say so. */
static __always_inline void forget(struct pt_regs *ctx, __u64 addr)
{
	if (addr && bpf_map_delete_elem(&live, &addr) == 0)
		output(ctx, ALLOC_EV_FREE, addr, 0, 0);
}

/* The return of a sampled call: its result is in use from now on. */
static __always_inline int returned(struct pt_regs *ctx, __u64 tid, const struct pending *p,
				    __u64 addr)
{
	if (p->result) {
		/* posix_memalign: the result through its pointer, when the
		 * call returned 0. */
		__u64 rc = addr;
		addr = 0;
		if (rc == 0 &&
		    bpf_probe_read_user(&addr, sizeof(addr), (const void *)p->result) != 0)
			addr = 0;
	}
	bpf_map_delete_elem(&pending, &tid);
	if (addr) {
		__u64 one = 1;
		bpf_map_update_elem(&live, &addr, &one, BPF_ANY);
	}
	output(ctx, ALLOC_EV_RETURN, addr, 0, 0);
	return 0;
}

SEC("uprobe")
int recce_alloc(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 kind = cookie & 0xff, zero = 0;
	__u64 tid = bpf_get_current_pid_tgid();
	/* The registers, read once: the verifier takes no context read
	 * through a pointer the compiler moved. */
	__u64 rax = ctx->rax, rdi = ctx->rdi, rsi = ctx->rsi, rdx = ctx->rdx;
	__u64 rip = ctx->rip, rsp = ctx->rsp;

	struct pending *p = bpf_map_lookup_elem(&pending, &tid);
	if (cookie & ALLOC_FN_AT_RETURN) {
		if (p && p->sp == rsp)
			return returned(ctx, tid, p, rax);
		return 0; /* a call not sampled, or one inside a sampled one */
	}
	if (p) {
		if (p->ret == rip)
			return returned(ctx, tid, p, rax);
		return 1; /* an allocator call inside a sampled one: left alone */
	}
	/* Not sampled yet, or no more: neither allocations nor frees, so
	 * that what is in use is what it was when sampling stopped. */
	__u32 tgid = tid >> 32;
	if (!bpf_map_lookup_elem(&armed, &tgid))
		return 1;

	/* An entry. Right after a glibc call left to malloc's probe, on the
	 * same stack: the return address that call found. */
	__u64 tail_ret = 0;
	if (cookie & ALLOC_FN_RETURNS) {
		struct tail *t = bpf_map_lookup_elem(&tail, &tid);
		if (t) {
			if (t->sp == rsp)
				tail_ret = t->ret;
			bpf_map_delete_elem(&tail, &tid);
		}
	}

	/* A free: forget the pointer, no return probe. */
	if (kind == ALLOC_FN_FREE) {
		forget(ctx, rdi);
		return 1;
	}
	if (kind == ALLOC_FN_REALLOC)
		forget(ctx, rdi);

	__u64 size = rdi;
	if (kind == ALLOC_FN_CALLOC)
		size = rdi * rsi;
	else if (kind == ALLOC_FN_REALLOC || kind == ALLOC_FN_ALIGNED)
		size = rsi;
	else if (kind == ALLOC_FN_POSIX_MEMALIGN)
		size = rdx;

	/* glibc's calls that go on to malloc: left to malloc's probe. */
	if (cookie & ALLOC_FN_GLIBC) {
		int left_to_malloc = (kind == ALLOC_FN_REALLOC && rdi == 0) ||
				     (kind == ALLOC_FN_ALIGNED && rdi <= ALLOC_GLIBC_MALLOC_ALIGN) ||
				     (kind == ALLOC_FN_POSIX_MEMALIGN &&
				      rsi <= ALLOC_GLIBC_MALLOC_ALIGN);
		if (left_to_malloc && (cookie & ALLOC_FN_RETURNS)) {
			struct tail t = {rsp, 0};
			bpf_probe_read_user(&t.ret, sizeof(t.ret), (const void *)rsp);
			bpf_map_update_elem(&tail, &tid, &t, BPF_ANY);
		}
		if (left_to_malloc)
			return 1;
	}

	/* Count down this CPU's bytes; not yet zero: not sampled. */
	__s64 *bytes = bpf_map_lookup_elem(&left, &zero);
	if (!bytes)
		return 1;
	*bytes -= size;
	if (*bytes > 0)
		return 1;

	/* Sampled: a new countdown from the table, the call's return
	 * address (and posix_memalign's result pointer) kept for its
	 * return, and the sample sent. */
	__u32 key = bpf_get_prandom_u32() & (ALLOC_DRAWS - 1);
	__s64 *draw = bpf_map_lookup_elem(&draws, &key);
	if (draw)
		*bytes = *draw;
	struct pending pend = {0, 0, rsp + 8};
	__u64 stacked = 0;
	bpf_probe_read_user(&stacked, sizeof(stacked), (const void *)rsp);
	pend.ret = tail_ret ? tail_ret : stacked;
	if (kind == ALLOC_FN_POSIX_MEMALIGN)
		pend.result = rdi;
	bpf_map_update_elem(&pending, &tid, &pend, BPF_ANY);
	output(ctx, ALLOC_EV_SAMPLE, size, pend.ret, tail_ret ? stacked : 0);
	return 0; /* run at this call's return too */
}

char LICENSE[] SEC("license") = "GPL"; /* the helpers used are GPL-only */
