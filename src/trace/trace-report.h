/*
 * A trace's calls summed by function, as `uftrace report` sums a -pg
 * recording: for `recce replay --report`. Fed the records in time order,
 * it pairs each return with its call on a stack per thread, and counts for
 * each function its calls, their total time (a recursive call's once, at
 * its outermost), their own time (the total less the calls under them that
 * were traced) and the longest call.
 *
 * A return whose call came before the trace began still counts, its own
 * time less what returned under it. A call whose return never came (the
 * trace ended first) is counted apart, with no time.
 *
 * Ownership: trace_report_new() returns a heap object freed by
 * trace_report_free(); rows and their names live as long as it.
 */
#ifndef RECCE_TRACE_REPORT_H
#define RECCE_TRACE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-event.h"

struct trace_report;

struct trace_report_row {
	const char *function;
	uint64_t calls; /* returns seen */
	uint64_t total_ns, self_ns, max_ns;
};

struct trace_report *trace_report_new(void);
void trace_report_free(struct trace_report *rep);

/* One record, after those before it in time. Returns 0 or -ENOMEM. */
int trace_report_add(struct trace_report *rep, const struct trace_record *r);

/* The functions, by total time (the longest first); *n of them. Returns
 * NULL when out of memory. */
const struct trace_report_row *trace_report_rows(struct trace_report *rep, size_t *n);

/* Calls whose return was not seen; returns seen. */
uint64_t trace_report_open(const struct trace_report *rep);
uint64_t trace_report_returns(const struct trace_report *rep);

#endif
