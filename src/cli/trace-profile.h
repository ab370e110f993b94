/*
 * `recce trace --slow DUR --profile FILE`: while the flight recorder
 * traces, the sampler samples every thread of the traced processes (on
 * and off the CPU, as `record -e wall` does) into an aggregate with a
 * timeline, in the same loop as the tracer. Each slow tree shown is kept
 * as a window of its thread's time; at the end the samples of each window
 * become one profile (profile/capture-profile.h): every slow call under a
 * frame of its own, "slow call 1: tree:request lasted 69.36 ms on thread
 * 4711" (numbered as shown), its stacks cut at the call, so one
 * flamegraph shows where each slow call's time went, on the CPU and
 * waiting.
 *
 * Ownership: trace_profile_new() returns a heap object freed by
 * trace_profile_free(); it borrows the trace's arguments.
 */
#ifndef RECCE_CLI_TRACE_PROFILE_H
#define RECCE_CLI_TRACE_PROFILE_H

#include "cli/cmd-trace.h"
#include "trace/trace-tree.h"
#include "trace/tracer.h"

#define TRACE_PROFILE_FREQ 999 /* samples a second of a thread's CPU time */

struct trace_profile;

/* The profile of a's slow calls, its sampling not started; ring_pages:
 * the sampling's data pages per CPU ring, 0 for record's. Dies when out
 * of memory. */
struct trace_profile *trace_profile_new(const struct trace_args *a, size_t ring_pages);

/* Starts sampling pids[0..n) (a's -p, or the command held before it
 * runs), before the tracer's probes, so that a call is sampled from its
 * first instant. Dies with record's message when the sampler cannot
 * start. */
void trace_profile_start(struct trace_profile *tp, const pid_t *pids, size_t n);

/* A tracer_config held hook: trace_profile_start() of the command. */
void trace_profile_held(void *tp, pid_t pid);

/* The tree's hook (trace_tree_config's shown): one more slow call. */
void trace_profile_shown(void *tp, const struct trace_tree_slow *s);

/* The trace and the sampling in one loop, until the tracer stops; then
 * the probes out (tracer_finish) and the sampling drained and ended. The
 * error of the loop or the tracer's finish, as tracer_run() returns it. */
int trace_profile_run(struct trace_profile *tp, struct tracer *t);

/* After the last slow tree is shown: the profile of the slow calls
 * written to a's --profile FILE, and said. Returns 0, or RECCE_EXIT_ERROR
 * when it could not be written (said). */
int trace_profile_write(struct trace_profile *tp);

void trace_profile_free(struct trace_profile *tp);

#endif
