/*
 * The program of call tracing's links (uprobe-bpf.h), in BPF C: at a
 * probe hit it fills the record of hit-format.h (cookie, pid and tid,
 * time, the registers, a call chain, a captured object) and writes it
 * into the CPU's perf ring, counting at once a hit it cannot write.
 *
 * The record is built in a per-CPU map value rather than on the stack:
 * with a call chain it takes 512 bytes, the whole of a BPF stack. The
 * settings are read-only data fixed before loading (the verifier then
 * drops the branches they turn off); the maps are made by user space and
 * put in place of these before loading.
 *
 * Built a second time with HITS_PY (hits-py.bpf.o), each record with a
 * call chain also carries the Python frames of its thread where the
 * cookie asks for them (py-walk.h, hit-format.h's UBPF_PY_*): a program
 * of its own, as the walk needs a BPF loop (Linux 5.17), which call
 * tracing elsewhere does not.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>

#include <bpf/bpf_helpers.h>

#include "perf/bpf/family.h"

#include "perf/hit-format.h"

const volatile int callchain = 0;   /* the return address and user call chain */
const volatile int family_only = 0; /* only the processes in family */
/* With callchain: bytes of user stack to copy (a multiple of 8, at most
 * UBPF_MAX_STACK), for an unwind from the call frame information; as
 * the copy grows, the copy map's value says how many now. */
const volatile __u32 stack_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} copy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* The words a record with a call chain has, its capture's after them,
 * (built for Python frames, theirs,) then the stack copy's
 * (hit-format.h). */
#define HEAD_WORDS (UBPF_NWORDS + UBPF_MAX_CHAIN)
#ifdef HITS_PY
#define PY_WORD	   (HEAD_WORDS + UBPF_CAP_WORDS)
#define STACK_WORD (PY_WORD + UBPF_PY_WORDS)
#else
#define STACK_WORD (HEAD_WORDS + UBPF_CAP_WORDS)
#endif

struct record {
	__u64 w[STACK_WORD + 1];
	__u8 stack[UBPF_MAX_STACK + 4096]; /* a page more: see copy_stack() */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record);
} scratch SEC(".maps");

#ifdef HITS_PY
#define PY_WALK_FRAMES UBPF_PY_FRAMES

/* Row n of the Python frames of the record being written. */
static __always_inline __u64 *py_walk_row(__u32 n)
{
	__u32 zero = 0;
	struct record *rec = bpf_map_lookup_elem(&scratch, &zero);

	return rec ? &rec->w[PY_WORD + 1 + 4 * (n & (UBPF_PY_FRAMES - 1))] : 0;
}

#include "perf/bpf/py-walk.h"

/* The Python frames of the thread at a hit, into the record's words from
 * PY_WORD on (hit-format.h); returns how many. */
static __always_inline __u32 python_frames(__u64 *w, __u64 cookie)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, flags = UBPF_PY_NOT_ASKED, n = 0;

	if (cookie & UBPF_PY_WALK) {
		const struct py_bpf_layout *L = bpf_map_lookup_elem(&layouts, &pid);
		flags = PY_REC_NO_THREAD;
		if (L)
			n = py_walk(L, (__u32)id,
				    cookie & UBPF_PY_FEW ? UBPF_PY_FEW_STEPS : PY_WALK_STEPS,
				    &flags);
	}
	if (n > UBPF_PY_FRAMES)
		n = UBPF_PY_FRAMES;
	w[PY_WORD] = n | (__u64)flags << 32;
	return n;
}
#endif

/* The object at a register plus a displacement, of the size the cookie
 * says, and for a string the bytes its first word points to, as many as
 * its second says (at most UBPF_CAPTURE_MAX); or two C strings at two
 * registers (UBPF_CAPTURE_STRS). */
static __always_inline void capture(struct record *rec, __u64 *cap, __u64 cookie)
{
	__u64 addr = rec->w[UBPF_GPR + ((cookie >> 54) & 15)] + (__s64)(__s16)(cookie >> 32);
	__u32 size = ((cookie >> 48) & 63) + 1;

	if (cookie & UBPF_CAPTURE_STRS) {
		__u64 at = rec->w[UBPF_GPR + ((cookie >> 54) & 15)];
		__u64 at2 = rec->w[UBPF_GPR + ((cookie >> 32) & 15)];
		if (cookie & UBPF_CAPTURE_COUNTED) {
			__u64 n = at2 < UBPF_CAPTURE_MAX ? at2 : UBPF_CAPTURE_MAX;
			long rc = n ? bpf_probe_read_user(&cap[UBPF_CAP_OBJ], n & 127, (const void *)at)
				    : 0;
			cap[UBPF_CAP_OBJ_RC] = rc ? (__u64)rc : n;
			return;
		}
		cap[UBPF_CAP_OBJ_RC] =
		    bpf_probe_read_user_str(&cap[UBPF_CAP_OBJ], UBPF_CAPTURE_MAX, (const void *)at);
		cap[UBPF_CAP_STR_RC] =
		    bpf_probe_read_user_str(&cap[UBPF_CAP_STR], UBPF_CAPTURE_MAX, (const void *)at2);
		return;
	}
	long rc = bpf_probe_read_user(&cap[UBPF_CAP_OBJ], size, (const void *)addr);
	cap[UBPF_CAP_OBJ_RC] = rc;
	if (rc != 0 || !(cookie & UBPF_CAPTURE_STRING))
		return;
	__u64 len = cap[UBPF_CAP_OBJ + 1];
	if (len > UBPF_CAPTURE_MAX)
		len = UBPF_CAPTURE_MAX;
	cap[UBPF_CAP_STR_RC] =
	    bpf_probe_read_user(&cap[UBPF_CAP_STR], len, (const void *)cap[UBPF_CAP_OBJ]);
}

/*
 * Copies the user stack from sp up into dst, limit bytes of it or as much
 * as is mapped: to the end of sp's page first, then page by page, so that
 * a stack whose end is nearer than limit (a main thread's, under
 * its arguments and environment) is copied up to that end, and not cut
 * where a single read of the whole would fail. A page that cannot be
 * read below one that can (never touched yet, as the middle of a big
 * frame, or swapped out: a probe cannot bring it in) is left a hole, its
 * bit set in *holes (page i of the copy, sp's being 0) and its bytes
 * zero, as the failed read leaves them. The last page may be read past
 * limit (dst has a page more): whole pages keep every read's size a
 * constant, as the verifier wants. Returns the bytes copied, at most
 * limit, to the end of the last page read.
 */
static __always_inline __u32 copy_stack(__u8 *dst, __u64 sp, __u32 limit, __u32 *holes)
{
	__u32 got = 4096 - (sp & 4095), valid, missing = 0;

	*holes = 0;
	if (bpf_probe_read_user(dst, got, (const void *)sp) != 0)
		return 0;
	valid = got;
	for (int i = 0; i < UBPF_MAX_STACK / 4096; i++) {
		if (got >= limit || got >= UBPF_MAX_STACK)
			break;
		if (bpf_probe_read_user(dst + got, 4096, (const void *)(sp + got)) == 0) {
			valid = got + 4096;
			*holes |= missing;
		} else {
			missing |= 2u << i; /* page i + 1 */
		}
		got += 4096;
	}
	return valid < limit ? valid : limit;
}

SEC("uprobe")
int recce_hit(struct pt_regs *ctx)
{
	__u32 zero = 0;

	if (family_only) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		if (!bpf_map_lookup_elem(&family, &tgid))
			return 0;
	}
	struct record *rec = bpf_map_lookup_elem(&scratch, &zero);
	if (!rec)
		return 0;
#ifdef HITS_PY
	/* The Python frames' words are written before they are read. */
	__builtin_memset(rec->w, 0, PY_WORD * 8);
	rec->w[PY_WORD] = rec->w[STACK_WORD] = 0;
#else
	__builtin_memset(rec->w, 0, sizeof(rec->w));
#endif
	__u64 *dropped = bpf_map_lookup_elem(&drops, &zero);
	if (dropped)
		rec->w[UBPF_DROPS] = *dropped;

	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 *w = rec->w;
	w[UBPF_COOKIE] = cookie;
	w[UBPF_PID_TGID] = bpf_get_current_pid_tgid();
	w[UBPF_TIME] = bpf_ktime_get_ns();
	w[UBPF_GPR + X86_RAX] = ctx->rax;
	w[UBPF_GPR + X86_RCX] = ctx->rcx;
	w[UBPF_GPR + X86_RDX] = ctx->rdx;
	w[UBPF_GPR + X86_RBX] = ctx->rbx;
	w[UBPF_GPR + X86_RSP] = ctx->rsp;
	w[UBPF_GPR + X86_RBP] = ctx->rbp;
	w[UBPF_GPR + X86_RSI] = ctx->rsi;
	w[UBPF_GPR + X86_RDI] = ctx->rdi;
	w[UBPF_GPR + X86_R8] = ctx->r8;
	w[UBPF_GPR + X86_R9] = ctx->r9;
	w[UBPF_GPR + X86_R10] = ctx->r10;
	w[UBPF_GPR + X86_R11] = ctx->r11;
	w[UBPF_GPR + X86_R12] = ctx->r12;
	w[UBPF_GPR + X86_R13] = ctx->r13;
	w[UBPF_GPR + X86_R14] = ctx->r14;
	w[UBPF_GPR + X86_R15] = ctx->r15;
	w[UBPF_IP] = ctx->rip;
	w[UBPF_FLAGS] = ctx->eflags;

	/* The record's words: the registers; with a call chain, the chain,
	 * then a capture's words if the cookie asks for one, then the stack
	 * copy; without, a capture's words straight after the registers. */
	__u32 size = UBPF_NWORDS * 8;
	if (callchain) {
		/* At a function's first instruction its caller has no frame
		 * yet: the return address at the stack pointer names it. */
		bpf_probe_read_user(&w[UBPF_RET_ADDR], 8, (const void *)ctx->rsp);
		long n = bpf_get_stack(ctx, &w[UBPF_NWORDS], UBPF_MAX_CHAIN * 8, BPF_F_USER_STACK);
		w[UBPF_CHAIN_BYTES] = n > 0 ? n : 0;
		size = HEAD_WORDS * 8;
		if (cookie & UBPF_CAPTURE) {
			capture(rec, &w[HEAD_WORDS], cookie);
			size = STACK_WORD * 8;
		}
#ifdef HITS_PY
		/* Without a stack copy after them, the frames read only. */
		__u32 npy = python_frames(w, cookie);
		size = stack_bytes ? STACK_WORD * 8 : (PY_WORD + 1 + 4 * npy) * 8;
#endif
		if (stack_bytes) {
			__u32 *now = bpf_map_lookup_elem(&copy, &zero);
			__u32 limit = now && *now ? *now : stack_bytes;
			if (limit > UBPF_MAX_STACK)
				limit = UBPF_MAX_STACK;
			__u32 holes = 0, got = copy_stack(rec->stack, ctx->rsp, limit, &holes);
			w[STACK_WORD] = got | (__u64)holes << 32 | (__u64)(limit / 8) << 48;
			if (got > UBPF_MAX_STACK)
				got = UBPF_MAX_STACK;
			size = (STACK_WORD + 1) * 8 + got;
		}
	} else if (cookie & UBPF_CAPTURE) {
		capture(rec, &w[UBPF_NWORDS], cookie);
		size = (UBPF_NWORDS + UBPF_CAP_WORDS) * 8;
	}
	if (bpf_perf_event_output(ctx, &hits, BPF_F_CURRENT_CPU, rec, size) != 0 && dropped)
		__sync_fetch_and_add(dropped, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL"; /* the helpers used are GPL-only */
