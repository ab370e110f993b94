/*
 * The calls in flight: for each thread (or, in Go code, each goroutine,
 * which moves between threads and whose stack moves in memory), the
 * traced calls that have not returned yet, innermost last, with what the
 * return event repeats (arguments, start time) and the stack pointer at
 * the call, which is where the return address sits.
 *
 * That address orders native calls for certain: while a call is live,
 * every later call on its thread has a lower stack pointer, and its own
 * return happens with the stack pointer back at that address. So a call
 * at or above a live frame's address, or a return above it, proves the
 * frame gone (an exception, longjmp or coroutine switch unwound it).
 * trace_calls_dead_below() says how many frames such an event ends.
 *
 * Ownership: the caller owns the struct (init/release); stacks live until
 * release.
 */
#ifndef RECCE_TRACE_CALLS_H
#define RECCE_TRACE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-event.h"
#include "util/htab.h"

#define TRACE_CALLS_DEPTH  64	 /* calls in flight kept per thread or goroutine */
#define TRACE_CALLS_STACKS 65536 /* threads and goroutines followed at once */

struct trace_call {
	int fn;
	int selected;	/* shown: its return is shown too */
	uint64_t time;	/* CLOCK_MONOTONIC ns */
	uint64_t sp;	/* at the call: the address of the return address */
	uint64_t lost;	/* events lost (tracer.c's lost_at()) when it was seen */
	/* When it last hit an indirect jump out whose target could not be
	 * read (its process gone): how it left, should nothing follow. */
	uint64_t left_at;
	uint8_t nargs;
	struct trace_arg args[TRACE_MAX_ARGS];
	uint64_t regs[TRACE_MAX_ARGS];
	char function[TRACE_FUNCTION_LEN]; /* a Python call's name ("py:app.handle"), else "" */
	int unshown;	   /* Python calls not shown running above it */
	/* A call above it ended unseen while events were lost: its own
	 * return may be among them, and a return seen at its place that of
	 * a later call whose entry was lost. How it ended is not known. */
	int doubtful;
};

struct call_stack {
	uint32_t pid;
	int go; /* id is a goroutine (r14), not a tid */
	uint64_t id;
	int depth;
	/* Python calls not shown (or past TRACE_CALLS_DEPTH) under the
	 * first kept one (tracer.c's py_unshown()). */
	int unshown;
	struct trace_call *calls; /* TRACE_CALLS_DEPTH */
};

struct trace_calls {
	struct htab index; /* (pid, go, id) -> index in stacks */
	struct call_stack *stacks;
	size_t n, cap;
};

void trace_calls_init(struct trace_calls *c);
void trace_calls_release(struct trace_calls *c);

/* The stack of a thread (go 0, id = tid) or goroutine of pid, created if
 * missing; NULL when out of memory or past TRACE_CALLS_STACKS. */
struct call_stack *trace_calls_stack(struct trace_calls *c, uint32_t pid, int go, uint64_t id);

/*
 * How deep st stays live after an event at stack pointer sp: frames whose
 * return address sits below sp (a return at sp: strictly below; a call at
 * sp: at or below) are over. Returns the new depth; frames above it were
 * unwound.
 */
int trace_calls_live_depth(const struct call_stack *st, uint64_t sp, int is_call);

#endif
