/*
 * Why a thread was off its CPU, for `recce record --event offcpu|wall`.
 *
 * The recorder puts a marker frame at the leaf of every off-CPU stack
 * (above the kernel's PERF_CONTEXT_* markers, so no address can be one):
 * OFFCPU_MARK_WAIT when the thread blocked, OFFCPU_MARK_RUNNABLE when it
 * was preempted while it could still run, OFFCPU_MARK_BEFORE for the time
 * a thread was already off its CPU when the recording began (its stack is
 * not known). The resolver names the marker "[off-CPU: REASON]", with the
 * reason of a blocked thread found from the names of the frames below it
 * by offcpu_reason().
 */
#ifndef RECCE_OFFCPU_REASON_H
#define RECCE_OFFCPU_REASON_H

#include <stddef.h>
#include <stdint.h>

#define OFFCPU_MARK_WAIT     ((uint64_t)-4000)
#define OFFCPU_MARK_RUNNABLE ((uint64_t)-3999)
#define OFFCPU_MARK_BEFORE   ((uint64_t)-3998)

/* Whether addr is one of the markers above. */
int offcpu_is_mark(uint64_t addr);

/*
 * The reason a thread blocked, from the function names of its stack, leaf
 * first (kernel frames, then user frames): the first frame that says
 * decides. "sleep" (nanosleep and friends), "lock" (futexes: mutexes,
 * condition variables, a runtime parking a thread; kernel mutexes and
 * semaphores), "io" (pipes, sockets, poll, select, epoll, terminals,
 * disk waits), "wait" (a child, a signal), or "other".
 */
const char *offcpu_reason(const char *const *names, size_t n);

/* The frame name of a marker whose blocked reason is reason (ignored for
 * the other markers): "[off-CPU: lock]", "[off-CPU: runnable]",
 * "[off-CPU: before the recording]". */
const char *offcpu_frame_name(uint64_t mark, const char *reason);

#endif
