/*
 * What the allocation sampling program (bpf/alloc.bpf.c) and user space
 * (alloc-bpf.c, alloc-probes.c) agree on: the kinds of probed function a
 * link's cookie names, and the records the program writes. Shared by
 * both sides, so this header includes nothing a BPF compilation lacks.
 */
#ifndef RECCE_PERF_ALLOC_FORMAT_H
#define RECCE_PERF_ALLOC_FORMAT_H

#include <linux/types.h>

/* What a probed function does; the low byte of a link's cookie. */
enum alloc_fn_kind {
	ALLOC_FN_MALLOC = 1,	 /* size in the first argument: malloc, operator new */
	ALLOC_FN_CALLOC,	 /* count and size */
	ALLOC_FN_REALLOC,	 /* pointer and size */
	ALLOC_FN_ALIGNED,	 /* alignment and size: aligned_alloc, memalign */
	ALLOC_FN_POSIX_MEMALIGN, /* result pointer, alignment and size */
	ALLOC_FN_FREE,		 /* pointer: free, operator delete */
};

/* A cookie flag: the allocator is glibc's, whose realloc(NULL, n) and
 * aligned allocations of alignment 16 or less call malloc (probed too):
 * those calls are left to malloc's probe. */
#define ALLOC_FN_GLIBC		 0x100
#define ALLOC_GLIBC_MALLOC_ALIGN 16
/* A cookie flag: the program runs at the function's return (a return
 * link, on a kernel without uprobe sessions), not at its entry. */
#define ALLOC_FN_AT_RETURN 0x200
/* A cookie flag of an entry link: a return link probes every return. */
#define ALLOC_FN_RETURNS 0x400

/* The raw data of a record: what happened, and a size or an address. */
enum alloc_event {
	ALLOC_EV_SAMPLE = 1, /* value: size; the record carries the stack */
	ALLOC_EV_RETURN,     /* value: the sampled call's result, 0 if it failed */
	ALLOC_EV_FREE,	     /* value: a sampled address freed */
};
struct alloc_raw {
	__u64 event;
	__u64 value;
	__u64 caller; /* ALLOC_EV_SAMPLE: the call's return address */
	/* ALLOC_EV_SAMPLE: where the call's return address is on the stack,
	 * what is there instead (a uretprobe's trampoline, put there for the
	 * glibc call that went on to this one), or 0. */
	__u64 stacked;
};

#define ALLOC_DRAWS 1024 /* countdowns to draw from (a power of two) */

#endif
