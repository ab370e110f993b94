/*
 * Off-CPU time for `recce record --event offcpu|wall`: each thread's stack
 * when it left its CPU, held until it comes back, then added to the
 * aggregate with the time it was away as its period. The stack gets an
 * off-CPU marker at its leaf (profile/offcpu-reason.h): runnable when the
 * thread was preempted, blocked otherwise.
 *
 * A thread already off its CPU when the recording began is counted from
 * the start, with the stack it was found waiting with (offcpu_waiting()),
 * or if that could not be read, under a marker alone ("before the
 * recording"); one that never comes back, until the end. A
 * thread created during the recording starts with nothing pending. Stacks
 * still pending at the end are added with the time until the end, so
 * that a thread's on-CPU and off-CPU time sum to the time it was watched.
 *
 * Ownership: offcpu_new() returns a heap object freed by offcpu_free();
 * it borrows the aggregate.
 */
#ifndef RECCE_OFFCPU_H
#define RECCE_OFFCPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct aggregate;
struct offcpu;

struct offcpu_stats {
	uint64_t switches; /* switches out added to the aggregate */
	uint64_t ns;	   /* their summed time off the CPU */
	uint64_t dropped;  /* not added: out of memory */
};

struct offcpu *offcpu_new(struct aggregate *agg);
void offcpu_free(struct offcpu *o);

/* The CLOCK_MONOTONIC time the recording began (record times are on that
 * clock): lead-ins start there, and times added to a timeline are
 * relative to it. Set it before the first record. */
void offcpu_set_start(struct offcpu *o, int64_t start_ns);

/* tid of pid existed when the recording began: if it never runs, it was
 * off its CPU all along. Returns 0 or -ENOMEM. */
int offcpu_attached(struct offcpu *o, pid_t pid, pid_t tid);

/* tid, attached, was found waiting at the start with this stack (see
 * waiting.h): it is off its CPU there since the start. Returns 0 or
 * -ENOMEM. */
int offcpu_waiting(struct offcpu *o, pid_t pid, pid_t tid, const uint64_t *frames, size_t n);

/* tid of pid left its CPU at time_ns; frames (leaf first, PERF_CONTEXT_*
 * markers included) is where it stopped. Returns 0 or -ENOMEM. */
int offcpu_out(struct offcpu *o, pid_t pid, pid_t tid, uint64_t time_ns, const uint64_t *frames,
	       size_t n);

/* The switch out of tid just given was a preemption: it could still run. */
void offcpu_preempted(struct offcpu *o, pid_t tid);

/* tid of pid came back to a CPU at time_ns. */
void offcpu_in(struct offcpu *o, pid_t pid, pid_t tid, uint64_t time_ns);

/* tid was created during the recording: nothing of it is pending. */
void offcpu_new_thread(struct offcpu *o, pid_t pid, pid_t tid);

/* tid exited: whatever it had pending is forgotten. */
void offcpu_exit(struct offcpu *o, pid_t tid);

/* Adds every pending stack with the time until end_ns. */
void offcpu_finish(struct offcpu *o, uint64_t end_ns);

void offcpu_get_stats(const struct offcpu *o, struct offcpu_stats *st);

#endif
