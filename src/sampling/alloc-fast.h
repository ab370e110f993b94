/*
 * Allocation sampling in the process, for `recce record -e alloc
 * --fast`: librecce-fast.so is loaded into each target and the entries
 * and exits of its allocator's functions (alloc-fns) jump to trampolines
 * that call the library's allocation recorder, which samples as the
 * kernel's program does and writes only the sampled calls (with the
 * caller's registers and a copy of the top of its stack, unwound here
 * like a perf sample), their results, and the frees of sampled addresses
 * (inject/fast-format.h). A call costs tens of nanoseconds instead of a
 * uprobe's trap, and no kernel interface newer than ptrace is needed.
 *
 * The target's code is put back by alloc_fast_detach(), or by the
 * library's watchdog if recce dies (inject/fast-set.h).
 *
 * Ownership: alloc_fast_new() returns a heap object freed by
 * alloc_fast_free(), which puts every target's code back first.
 */
#ifndef RECCE_SAMPLING_ALLOC_FAST_H
#define RECCE_SAMPLING_ALLOC_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject/fast-set.h"

struct alloc_fast;
struct proc_registry;
struct symbolizer;

/* Samples every interval bytes on average, each sample with stack_bytes
 * of its stack (RECCE_FAST_ALLOC_STACK at most). NULL when out of
 * memory. */
struct alloc_fast *alloc_fast_new(uint64_t interval, uint32_t stack_bytes);

/* Loads the library into pid and hooks the allocators it maps. Returns
 * the number of functions hooked; -ENOENT when it maps no allocator,
 * -ENOTSUP when its malloc cannot be hooked (alloc_fast_refused() says
 * why), -ESRCH when it is gone, or the fast set's errors with
 * alloc_fast_info() saying what failed. */
int alloc_fast_attach(struct alloc_fast *af, struct proc_registry *procs, struct symbolizer *sym,
		      pid_t pid);

/* What failed in the last alloc_fast_attach(). */
const struct fast_set_info *alloc_fast_info(const struct alloc_fast *af);

/* Functions of an allocator left unhooked (their code cannot hold a
 * trampoline): how many, and the first one's name and why. */
size_t alloc_fast_refused(const struct alloc_fast *af, const char **name, const char **why);

/* Hands the events written since the last call to cb (see
 * fast_set_read_allocs()); returns cb's last value or -errno. */
int alloc_fast_read(struct alloc_fast *af, int (*cb)(const struct fast_alloc_event *, void *),
		    void *arg);

/* Whether addr, in process pid, lies inside a hooked function: a call
 * made from there is the allocator calling itself. */
int alloc_fast_inside(const struct alloc_fast *af, pid_t pid, uint64_t addr);

/* The objects hooked, by path. */
size_t alloc_fast_objects(const struct alloc_fast *af, const char *const **paths);

struct alloc_fast_stats {
	uint64_t lost;	    /* records a full ring or a missing one lost */
	uint64_t no_stack;  /* samples off their thread's stack: no stack copied */
	uint64_t untracked; /* sampled addresses whose free would not be seen */
	uint64_t bad;	    /* records that did not parse */
	uint64_t children;  /* events of processes recce could not find */
	int detach_err;	    /* -errno: a target's code could not be put back by recce (its
			     * library's watchdog does it as recce exits) */
};
void alloc_fast_stats(const struct alloc_fast *af, struct alloc_fast_stats *st);

/* Puts every target's code back (the targets run at full speed when it
 * returns, but for the trampolines a thread may still be in); the events
 * written before stay to be read. Returns 0, or the first error (the
 * library's watchdog puts back what recce could not, as recce exits). */
int alloc_fast_detach(struct alloc_fast *af);

void alloc_fast_free(struct alloc_fast *af);

#endif
