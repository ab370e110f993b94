/*
 * Probes without the kernel, for `recce trace --fast`: librecce-fast.so
 * is loaded into the process (inject/), and each traced function's entry
 * becomes a 5-byte jump to a trampoline in a page recce maps next to the
 * code. The trampoline pushes the argument registers, calls the library's
 * recorder (which writes them into the thread's ring in a file recce and
 * the process share, inject/fast-format.h), pops them, runs the
 * instructions the jump replaced (moved by inject/relocate) and jumps
 * back. A call costs tens of nanoseconds instead of a uprobe's trap.
 *
 * A child the process forks while traced is traced too: it keeps the
 * jumps, records into rings of its own, and its own watchdog puts its
 * bytes back at the end (or recce does, when the child is stopped).
 *
 * Safety: the jumps are written and removed with every thread stopped and
 * none of them, nor any return address, in the bytes replaced
 * (inject/code-write). The library watches recce: if recce dies, however
 * it dies, it puts every function's bytes back within a second. The
 * trampolines and the library stay in the process, where a thread may
 * still be running in them.
 *
 * Returns: the last instructions before each `ret` (or jump out of the
 * function) are moved the same way, at least five bytes of them, and the
 * trampoline calls the recorder just before the exit itself, with the
 * stack pointer where the call put the return address. The stack is never
 * changed, so unwinders, C++ exceptions and Go's runtime see their own
 * frames. A function where those bytes are fewer, hold a call, or are the
 * target of a jump is refused (fast_refusal()).
 *
 * The hits come out as the uprobe set's (struct uprobe_hit), so that the
 * tracer treats both alike: the six argument registers, rax, the stack
 * pointer and the return address, and ip: the entry or the exit.
 *
 * Ownership: the caller owns the set (fast_set_new/_free); it borrows the
 * symbolizer.
 */
#ifndef RECCE_INJECT_FAST_SET_H
#define RECCE_INJECT_FAST_SET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject/fast-format.h"
#include "inject/inject.h"
#include "inject/trampoline.h"
#include "perf/uprobe.h"

struct symbolizer;
struct fast_set;

/* Why a function cannot be traced with --fast, or NULL when it can: its
 * code (size bytes at addr in pid) is read, and its entry and the last
 * instructions before each of its exits moved as the trampolines would
 * move them. */
const char *fast_refusal(pid_t pid, uint64_t addr, uint64_t size, const struct tramp_exit *exits,
			 size_t nexits, size_t undecided);

/* What went wrong in fast_set_new(), for the user. */
enum fast_failure {
	FAST_OK,
	FAST_NO_LIBRARY, /* librecce-fast.so was not found (path: where it looked) */
	FAST_INJECT,	 /* injection refused: inject_refusal says why */
	FAST_LOAD,	 /* the process's dlopen failed: detail has dlerror() */
	FAST_START,	 /* the library did not start: the error is its own */
	FAST_FILE,	 /* the shared file could not be made */
	FAST_LOCKED,	 /* another recce is changing the process's code (holder) */
};

struct fast_set_info {
	enum fast_failure failure;
	enum inject_refusal inject_refusal;
	char detail[512];
	char library[1024]; /* the library loaded */
	pid_t holder;	    /* FAST_LOCKED: the recce holding the lock, 0: unknown */
};

/* Allocations (`recce record -e alloc --fast`): the library's allocation
 * recorder samples in the process (inject/fast-format.h). */
struct fast_alloc_config {
	int64_t draws[RECCE_FAST_ALLOC_DRAWS]; /* countdowns of bytes, drawn at random */
	uint32_t stack_bytes;		       /* a sample's stack copy, at most */
};

/* Loads the library into pid and starts it, holding the lock on pid's
 * code (inject/target-lock) until fast_set_free(). Returns 0, or -errno
 * with info->failure set. */
int fast_set_new(pid_t pid, struct symbolizer *sym, struct fast_set **out,
		 struct fast_set_info *info);

/* The same, for allocations: the trampolines call the allocation
 * recorder, and each hook is told what it is by fast_set_alloc_kind()
 * before fast_set_attach(). */
int fast_set_new_alloc(pid_t pid, struct symbolizer *sym, const struct fast_alloc_config *cfg,
		       struct fast_set **out, struct fast_set_info *info);

/* Plans the probes of the function of size bytes at addr: its entry,
 * reported as probe number probe, and each of its exits (at least five
 * bytes before each are moved to a trampoline of their own, unless the
 * entry's trampoline holds it); undecided: its jumps out through a table
 * or a register, which are not hooked. Returns 0; -ENOTSUP when fast_refusal()
 * would refuse it; or -errno. */
int fast_set_add(struct fast_set *s, uint64_t addr, uint64_t size, int probe,
		 const struct tramp_exit *exits, size_t nexits, size_t undecided);

/* The hooks fast_set_add() numbered: how many, and hook id's probe
 * number and the instruction it stands for (an entry or an exit). */
size_t fast_set_nhooks(const struct fast_set *s);
int fast_set_hook(const struct fast_set *s, size_t id, int *probe, uint64_t *ip);

/* Allocations: what hook id is to the recorder (RECCE_FAST_ALLOC_*:
 * the function's kind, and where the hook is). Returns 0, or -EINVAL
 * past RECCE_FAST_ALLOC_HOOKS. */
int fast_set_alloc_kind(struct fast_set *s, size_t id, uint8_t kind);

/* Writes the trampolines and the jumps, all threads stopped. Returns 0,
 * or code_write()'s errors (-EBUSY: a thread stayed in the bytes). */
int fast_set_attach(struct fast_set *s, int timeout_ms);

/* Hands every record written since the last call to cb, in each thread's
 * order; cb returns non-zero to stop. Returns cb's last value. */
int fast_set_read(struct fast_set *s, int (*cb)(const struct uprobe_hit *, void *), void *arg);

/* An allocation event read back. pid is the process as recce knows it:
 * the traced one, or a child of it found. */
struct fast_alloc_event {
	pid_t pid, tid;
	uint64_t tsc; /* the CPU clock; never less than the ring's last */
	uint64_t seq; /* the order it was read in */
	int probe;    /* the hook's probe number */
	uint64_t ip;  /* the hook's instruction: for a sample, the function's entry */
	uint64_t event, value, flags;
	uint64_t caller; /* ALLOC_EV_SAMPLE: the return address */
	/* ALLOC_EV_SAMPLE: the registers at the function's entry (in
	 * PERF_EVENTS_REGS_MASK order: the callee-saved ones, the stack
	 * pointer and the instruction pointer set, the others 0), and the
	 * stack copied from that stack pointer up. */
	uint64_t regs[17];
	const uint8_t *stack;
	size_t stack_len;
};

/* Hands every allocation event written since the last call to cb, in the
 * order of the CPU clock across threads (a free seen after the sample
 * it frees); cb returns non-zero to stop. Records that do not parse are
 * skipped and counted in *bad (may be NULL). Returns cb's last value, or
 * -ENOMEM. */
int fast_set_read_allocs(struct fast_set *s, int (*cb)(const struct fast_alloc_event *, void *),
			 void *arg, uint64_t *bad);

/* Allocations: samples taken off their thread's stack (none copied), and
 * sampled addresses the library's table had no room for. */
void fast_set_alloc_stats(const struct fast_set *s, uint64_t *no_stack, uint64_t *untracked);

/* Whether the process was found stopped by job control while a page for
 * trampolines was being mapped in it (fast_set_add then failed -EBUSY). */
int fast_set_stopped(const struct fast_set *s);

/* Children the process forked while traced that could not be traced
 * (more than RECCE_FAST_CHILDREN at once, or no thread for their
 * watchdog): their code put back at fork. */
uint64_t fast_set_forks(const struct fast_set *s);

/* Calls of children recce could not find, though a process of the pid
 * they gave lives (they exec'd before it looked, or are in another PID
 * namespace): shown with that pid and no value read from their memory
 * (as for children that exited first, whose memory is gone). */
uint64_t fast_set_unfound_calls(const struct fast_set *s);

/* Children whose jumps recce could not see put back at the end: their
 * watchdog puts them back when it runs. */
size_t fast_set_children_left(const struct fast_set *s);

/* Records lost: a ring was full, or a thread found no ring. */
uint64_t fast_set_lost(const struct fast_set *s);

/* The records thread tid's ring has lost so far, into lost: 0, or -1 if
 * no ring is the thread's (the most of them, if rings passed from one
 * thread to another of the same id). */
int fast_set_thread_lost(const struct fast_set *s, int32_t tid, uint64_t *lost);

/* Stops recording and puts every function's bytes back, all threads
 * stopped. Returns 0, or -errno when the bytes could not be put back
 * (the library does it when recce exits). */
int fast_set_remove_all(struct fast_set *s);

void fast_set_free(struct fast_set *s);

#endif
