/*
 * DWARF unwinding of sampled user stacks (`--call-graph auto`, the
 * default of record, capture, top and the continuous agent, and `dwarf`),
 * for code built without frame pointers such as Debian's libc. Each sample carries
 * the user registers and a copy of the top of the user stack; elfutils'
 * libdwfl unwinder walks it with the call frame information (.eh_frame,
 * .debug_frame) of the modules mapped in the target.
 *
 * One Dwfl per process holds that process's modules at their runtime load
 * bias, reported from the process registry's open files (so a deleted or
 * replaced binary still unwinds). It is kept between samples and brought up
 * to date when the registry says the mappings changed.
 *
 * The design follows perf's tools/perf/util/unwind-libdw.c: memory reads
 * inside the copied stack come from the copy, other reads (rare: .got,
 * constant data used by a CFI expression) from the mapped file.
 *
 * Ownership: unwinder_new() returns a heap object freed by unwinder_free();
 * it borrows the registry, which must outlive it.
 */
#ifndef RECCE_UNWIND_H
#define RECCE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_registry;
struct unwinder;

/* check: run the fast path and libdwfl on every sample and count where
 * they differ (see unwinder_check_stats). */
struct unwinder *unwinder_new(struct proc_registry *procs, int check);
void unwinder_free(struct unwinder *u);

/* In check mode: samples compared, those the fast path unwound, and the
 * stacks where the two differ. */
struct unwind_check_stats {
	uint64_t checked, fast, differ;
};
void unwinder_check_stats(const struct unwinder *u, struct unwind_check_stats *st);

/* pid's mappings changed (a new mapping): its modules are checked against
 * the registry before its next unwind. */
void unwinder_maps_changed(struct unwinder *u, pid_t pid);

/* pid exec'd or exited: its state is dropped and rebuilt if needed. */
void unwinder_forget(struct unwinder *u, pid_t pid);

/* The symbolizer closed files (symbolizer_sweep()): every state that
 * names a file (each process's modules, the rules shared by file) is
 * dropped, and rebuilt as samples need it. */
void unwinder_files_closed(struct unwinder *u);

/*
 * Unwinds one sample of thread tid of process pid. regs holds the user
 * registers in PERF_EVENTS_REGS_MASK order (perf-events.h); stack is the
 * copy of stack_len bytes of user stack starting at the sampled SP. Fills
 * frames[] leaf first with program counters (return addresses after the
 * leaf) and returns how many, at least 1 (the sampled IP) unless max is 0.
 * *ended (may be NULL) is 1 when the walk reached the outermost frame,
 * 0 when it stopped short of it: the copy ended, a frame had no unwind
 * information, or max was reached.
 */
int unwinder_unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs,
		    const uint8_t *stack, size_t stack_len, uint64_t *frames, size_t max,
		    int *ended);

/*
 * The frame pointers' chain in a copy of stack_len bytes of user stack
 * starting at sp: from bp, each frame's saved rbp then its return
 * address, as long as both lie in the copy and the chain goes up. The
 * return addresses into out (cap at most). Where the chain stops on a
 * frame that does not go up, *ended (may be NULL) says whether that was
 * the null rbp of the outermost frame; it is left as it was otherwise.
 * Returns the count.
 */
size_t unwind_copy_fp(uint64_t bp, uint64_t sp, const uint8_t *stack, size_t stack_len,
		      uint64_t *out, size_t cap, int *ended);

/*
 * Why a walk of a copied stack stopped short of the outermost frame.
 * unwinder_sample() can end such a stack with a marker frame that says
 * which (above the kernel's PERF_CONTEXT_* markers, so no address can be
 * one), and counts the copy's end and the depth limit. A walk that ends
 * in a file's code without CFI is marked, not counted: whole stacks end
 * so too (Go's runtime.goexit in a stripped binary has no CFI), and the
 * resolver, which knows the last frame's name, drops the marker of those
 * and names and counts the others.
 */
enum unwind_end {
	UNWIND_END_WHOLE,	/* the outermost frame was reached */
	UNWIND_END_COPY,	/* the next frame lies past the stack copy */
	UNWIND_END_NO_INFO,	/* code of a file without CFI there */
	UNWIND_END_DEPTH,	/* the most frames asked for */
	UNWIND_END_OTHER_STACK, /* a signal handler ran on a stack of its own:
				   the interrupted code's is not in the copy,
				   and its callers past one that keeps no frame
				   pointer are unknown */
	UNWIND_END_NOT_PRESENT, /* the copy ended at a page of the stack not
				   in memory (never touched yet, as in the
				   fault that brings a new one in, or swapped
				   out), short of the next frame */
	UNWIND_END_STOPPED,	/* for no reason the walk can tell (code in no
				   file, such as JIT code; CFI that does not
				   lead on): not marked */
	UNWIND_END_KINDS
};
#define UNWIND_MARK_BASE ((uint64_t)-3900) /* + an enum unwind_end other than WHOLE */

/* Whether addr is one of the markers above. */
int unwind_is_mark(uint64_t addr);
/* Its frame's name: "[stack copy ended]", "[depth limit]", "[no unwind info]",
 * "[interrupted stack not copied]", "[stack not in memory]". */
const char *unwind_mark_name(uint64_t addr);

/* Whether frames (n, as unwinder_sample() gave them) end where the
 * stack copy did. */
static inline int unwind_cut_at_copy(const uint64_t *frames, size_t n)
{
	return n && frames[n - 1] == UNWIND_MARK_BASE + UNWIND_END_COPY;
}

/* Stacks unwinder_sample() ended with a marker, by enum unwind_end. */
void unwinder_end_counts(const struct unwinder *u, uint64_t counts[UNWIND_END_KINDS]);

/* The most bytes of stack, from the stack pointer, that a stack
 * unwinder_sample() ended with [stack copy ended] read past the copy for
 * its next frame (0: none ended so): a copy this long would have given
 * at least one more frame of each. */
uint64_t unwinder_copy_wanted(const struct unwinder *u);

/* One sample as the kernel gave it. */
struct unwind_sample {
	pid_t pid, tid;
	uint64_t ip;
	const uint64_t *ips; /* the callchain: the kernel's part, then (if the
				frame-pointer walk was asked for) PERF_CONTEXT_USER
				and the user part */
	size_t nips;
	const uint64_t *regs; /* NULL: no user registers (a kernel thread) */
	const uint8_t *stack;
	size_t stack_len;
	/* End a stack whose unwind stopped short (and the frame-pointer
	 * walk after it added nothing) with a marker frame saying why. */
	int mark_end;
	/* The bytes of stack asked of the kernel (0: unknown). A copy
	 * shorter than that holds the stack to its end: a walk that tried
	 * to read past it did not stop for want of a longer copy. */
	size_t stack_asked;
	/* Pages of the copy not read (bit i: page i, the stack pointer's
	 * being 0), their bytes not the stack's: a walk that needs a word
	 * of one ends there, at [stack not in memory]. */
	uint32_t holes;
};

/*
 * A sample's whole stack, leaf first, into out (cap entries): the kernel
 * part of its callchain (at most max_kernel entries), PERF_CONTEXT_USER,
 * then the user stack unwound from the registers and the copy (at most
 * max_user frames). With fp_after, where that unwind stops short of the
 * stack's end (the copy ended, or code without unwind information such as
 * JIT code), the frame-pointer walk goes on from the deepest frame both
 * reached: in recursion, joined at the same repeat of that frame; a walk
 * that never meets the unwound stack adds nothing, since its frames could
 * be a frame pointer's garbage. With smp->mark_end, a stack still short
 * then ends with a marker (see enum unwind_end). Returns the count.
 */
size_t unwinder_sample(struct unwinder *u, const struct unwind_sample *smp, int fp_after,
		       size_t max_kernel, size_t max_user, uint64_t *out, size_t cap);

#endif
