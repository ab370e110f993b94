/*
 * Task metrics (tasks.h) as people and tools read them: a table, a JSON
 * object a snapshot, and Prometheus's text exposition format (counters
 * `_total`, times in `_seconds`, a histogram of run times; labels pid,
 * comm and type; at most top_k types a process, by execution time, so
 * that the labels' cardinality stays bounded).
 */
#ifndef RECCE_EVENTS_TASKS_PRINT_H
#define RECCE_EVENTS_TASKS_PRINT_H

#include <stdio.h>

#include "events/tasks.h"

/* What a snapshot is of. */
struct tasks_view {
	const struct tasks *t;
	int pid;
	const char *comm;
	uint64_t lost;	  /* events the rings overwrote before they were read */
	double elapsed_s; /* since the reader attached */
	enum task_sort sort;
	const char *filter; /* only types whose name holds this; NULL: all */
	size_t limit;	    /* rows at most; 0: all */
};

void tasks_print_table(FILE *out, const struct tasks_view *v);
void tasks_print_json(FILE *out, const struct tasks_view *v);
void tasks_print_prometheus(FILE *out, const struct tasks_view *v, size_t top_k);

#endif
