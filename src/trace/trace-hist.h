/*
 * Latency summaries of `recce trace --hist`: per function, a log2
 * histogram of call durations with count, min, median, p99 and max. A
 * histogram is a fixed array (64 buckets of powers of two nanoseconds), so
 * adding a duration never allocates. Percentiles are exact when the
 * durations fit in the sample buffer, else estimated from the buckets.
 *
 * Ownership: struct trace_hist is a caller-allocated value; call
 * trace_hist_init() first. Nothing to release.
 */
#ifndef RECCE_TRACE_HIST_H
#define RECCE_TRACE_HIST_H

#include <stdint.h>
#include <stdio.h>

#define TRACE_HIST_BUCKETS 64
#define TRACE_HIST_SAMPLES 4096 /* durations kept for exact percentiles */

struct trace_hist {
	uint64_t count, min, max, sum;
	uint64_t buckets[TRACE_HIST_BUCKETS]; /* bucket b: [2^b, 2^(b+1)) ns; 0 ns in 0 */
	uint64_t samples[TRACE_HIST_SAMPLES];
};

void trace_hist_init(struct trace_hist *h);
void trace_hist_add(struct trace_hist *h, uint64_t ns);

/* The duration at quantile q (0..1): exact from the kept samples, or the
 * upper bound of the bucket that holds it. 0 when empty. Sorts the kept
 * samples (so not const). */
uint64_t trace_hist_quantile(struct trace_hist *h, double q);

/* Prints the summary line and the non-empty buckets with bars, for a
 * function named name. */
void trace_hist_print(struct trace_hist *h, const char *name, FILE *out);

/* Formats a duration as "812 ns", "3.41 ms", "3.41 s" into buf. */
void trace_format_duration(char *buf, size_t len, uint64_t ns);

#endif
