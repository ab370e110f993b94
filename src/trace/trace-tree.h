/*
 * Call trees from trace events (`recce trace --tree`, `recce replay
 * --tree`): the calls and returns of each thread, nested as they ran, one
 * line a call with no traced call under it and an opening and a closing
 * line around those that have some, as `uftrace replay` shows a program
 * built with -pg. Lines come as the calls end, so a live trace shows them
 * as it goes: a call is shown once it, or a call under it, has ended
 * shown; a call shorter than the minimum duration, with its calls, is not;
 * nor calls deeper than the maximum depth.
 *
 * As a flight recorder (a slow threshold), each call at the top of its
 * thread's tree is kept with every call under it until it ends, and shown
 * only if it lasted the threshold or longer: as it ends, or the slowest
 * few at the end.
 */
#ifndef RECCE_TRACE_TREE_H
#define RECCE_TRACE_TREE_H

#include <stdint.h>
#include <stdio.h>

#include "trace/trace-event.h"

/* A slow tree, as it is shown: which call, on which thread, when. */
struct trace_tree_slow {
	uint32_t pid, tid;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME: the top call's start, its end */
	const char *function;	   /* the top call's "object:function" */
	const char *file;	   /* its source file, if the call says ("file"), or NULL */
	int file_cut;		   /* file is the start of the name only */
	const char *title;	   /* "tree:request lasted 60.12 ms on thread 4711" */
};

struct trace_tree_config {
	unsigned max_depth; /* calls at depth 1 to this are shown; 0: all */
	uint64_t min_ns;    /* a call shorter than this is not shown */
	uint64_t slow_ns;   /* > 0: only trees whose top call lasted this long */
	unsigned keep;	    /* with slow_ns: the slowest this many, at the end; 0: all */
	FILE *out;
	/* With slow_ns, may be NULL: told of each slow tree as it is shown
	 * (the strings live until it returns). */
	void (*shown)(void *arg, const struct trace_tree_slow *s);
	void *shown_arg;
};

struct trace_tree;

/* 0 and *out, or -ENOMEM. */
int trace_tree_new(const struct trace_tree_config *cfg, struct trace_tree **out);

/* The next event of a thread (events of one thread in their order). Calls
 * that never end (the trace stopped by the tracer ends every call) stay
 * unshown. 0, or -ENOMEM (the event is not shown). */
int trace_tree_add(struct trace_tree *t, const struct trace_record *r);

/* The slowest trees kept (keep), slowest first; at the end of the events. */
void trace_tree_flush(struct trace_tree *t);

/* Calls shown and calls left out (shorter than the minimum, or deeper);
 * with slow_ns, trees whose top call ended, those slow enough, and those
 * shown. */
struct trace_tree_counts {
	uint64_t shown, hidden;
	uint64_t trees, slow, slow_shown;
};
void trace_tree_counts(const struct trace_tree *t, struct trace_tree_counts *c);

void trace_tree_free(struct trace_tree *t);

#endif
