/*
 * The walk of a CPython thread's frames from inside the kernel, shared by
 * the Python frame program of samples (py.bpf.c) and the hit program
 * built for Python calls (hits.bpf.c with HITS_PY): the thread's state
 * (tstates, else found in the interpreter's list of them by its native
 * id), then its chain of frames from the current one outwards, each
 * frame's code object, instruction, module and qualified name written to
 * the row py_walk_row(n) gives, up to PY_WALK_FRAMES of them: the
 * including program defines both before including this (a constant
 * bound: one kept in the walk's state would be tracked exactly, and the
 * verifier would see each step as new). The maps are made by user space and put in
 * place of these before loading.
 */
#ifndef RECCE_BPF_PY_WALK_H
#define RECCE_BPF_PY_WALK_H

#include "perf/py-format.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct py_bpf_layout);
} layouts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32); /* tid */
	__type(value, __u64);
} tstates SEC(".maps");

/* One frame's first bytes, read at once: a read of the target's memory
 * for each field took most of a frame's time. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[PY_BPF_FRAME_BYTES]);
} frame SEC(".maps");

/* Row n (< PY_WALK_FRAMES) of the frames being written, 4 words; NULL
 * when none. */
static __always_inline __u64 *py_walk_row(__u32 n);

static __always_inline int read_u64(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* The search of the interpreter's thread states for one thread's. */
struct find {
	__u64 ts; /* the next state */
	__u32 tid, native_tid, next;
	__u32 found;
};

static long find_one(__u32 i, void *ctx)
{
	struct find *f = ctx;
	__u64 native = 0;

	if (!f->ts || read_u64(&native, f->ts + f->native_tid))
		return 1;
	if (native == f->tid) {
		f->found = 1;
		return 1;
	}
	if (read_u64(&f->ts, f->ts + f->next))
		f->ts = 0;
	return 0;
}

/* The thread state of thread tid, whose native id is checked, so a state
 * a thread left behind is not taken for another's; 0 when not found. */
static __always_inline __u64 thread_state(const struct py_bpf_layout *L, __u32 tid)
{
	__u64 ts = 0, native = 0, interp = 0;
	__u64 *known = bpf_map_lookup_elem(&tstates, &tid);

	if (known && *known && read_u64(&native, *known + L->ts_native_tid) == 0 && native == tid)
		return *known;
	if (read_u64(&interp, L->runtime + L->rt_interp_head) || !interp ||
	    read_u64(&ts, interp + L->interp_threads_head))
		return 0;
	struct find f = {.ts = ts, .tid = tid, .native_tid = L->ts_native_tid, .next = L->ts_next};
	bpf_loop(PY_BPF_THREADS, find_one, &f, 0);
	if (!f.found)
		return 0;
	bpf_map_update_elem(&tstates, &tid, &f.ts, BPF_ANY);
	return f.ts;
}

/* The walk of one chain, a frame a step (bpf_loop: the verifier checks
 * a step once). */
struct walk {
	struct py_bpf_layout L;
	__u64 at; /* the next frame */
	__u32 n;  /* frames written */
	__u32 cut;
};

/* The word at byte off of a frame read into buf (0 past its end, or
 * where off is not a word's). */
static __always_inline __u64 frame_u64(const __u8 *buf, __u32 off)
{
	if (off > PY_BPF_FRAME_BYTES - 8 || (off & 7))
		return 0;
	/* The same offset, bounded where the verifier sees it (clang may
	 * fold the test above into one the verifier cannot follow). */
	asm volatile("" : "+r"(off));
	off &= (PY_BPF_FRAME_BYTES - 8) & ~7u;
	return *(const __u64 *)(buf + off);
}

static long walk_one(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	__u32 zero = 0, size = w->L.fr_size;
	__u64 module = 0, qual = 0, at = w->at;

	if (!at || w->n >= PY_WALK_FRAMES)
		return 1;
	__u8 *fr = bpf_map_lookup_elem(&frame, &zero);
	if (!fr)
		return 1;
	if (size < 8 || size > PY_BPF_FRAME_BYTES ||
	    bpf_probe_read_user(fr, size, (const void *)at)) {
		w->cut = 1;
		return 1;
	}
	__u64 code = frame_u64(fr, w->L.fr_code), prev = frame_u64(fr, w->L.fr_previous);
	__u64 instr = frame_u64(fr, w->L.fr_instr), func = frame_u64(fr, w->L.fr_func);
	__u8 owner = fr[w->L.fr_owner & (PY_BPF_FRAME_BYTES - 1)];
	__u8 entry =
	    w->L.fr_is_entry >= 0 ? fr[(__u32)w->L.fr_is_entry & (PY_BPF_FRAME_BYTES - 1)] : 0;
	w->at = prev;
	__u32 n = w->n;
	if (owner == PY_OWNER_CSTACK) {
		/* The frame before it was the first of a C call. */
		__u64 *before = n > 0 ? py_walk_row(n - 1) : 0;
		if (before)
			before[0] |= PY_FRAME_ENTRY;
		return 0;
	}
	__u64 *row = py_walk_row(n);
	if (!row)
		return 1;
	code &= ~PY_FRAME_BITS;
	if (func && read_u64(&module, func + w->L.func_module))
		module = 0;
	__u64 globals = w->L.fr_globals ? frame_u64(fr, w->L.fr_globals) : 0;
	if (!module && globals)
		module = globals | PY_MODULE_GLOBALS;
	if (read_u64(&qual, code + w->L.code_qualname))
		qual = 0;
	if (entry)
		code |= PY_FRAME_ENTRY;
	if (owner == PY_OWNER_GENERATOR)
		code |= PY_FRAME_GEN;
	row[0] = code;
	row[1] = instr;
	row[2] = module;
	row[3] = qual;
	w->n = n + 1;
	return 0;
}

/*
 * Walks the frames of thread tid of the process whose layout is L, up to
 * PY_WALK_FRAMES of them, in at most steps steps (a frame or a shim
 * frame each; PY_WALK_STEPS for the whole chain): returns the frames
 * written, and sets *flags (PY_REC_*).
 */
#define PY_WALK_STEPS (PY_WALK_FRAMES + 16) /* room for a few shim frames beside */
static __always_inline __u32 py_walk(const struct py_bpf_layout *L, __u32 tid, __u32 steps,
				     __u32 *flags)
{
	__u64 ts = thread_state(L, tid), frames = ts, at = 0;

	*flags = 0;
	if (!ts || (L->ts_cframe >= 0 && read_u64(&frames, ts + (__u32)L->ts_cframe)) ||
	    read_u64(&at, frames + L->ts_frame)) {
		*flags |= PY_REC_NO_THREAD;
		at = 0;
	}
	struct walk w = {.L = *L, .at = at, .n = 0, .cut = 0};
	bpf_loop(steps, walk_one, &w, 0);
	if (w.at || w.cut)
		*flags |= PY_REC_CUT;
	return w.n;
}

#endif
