/*
 * record's spans: the librecce spans and sequence tokens of the processes
 * recorded, followed while they are sampled, and each sample labelled with
 * the span it fell in ("span_name") and the trace id its thread carried
 * ("trace_id", the 32 hex digits of the token's W3C traceparent), so that
 * `recce report --tag span_name=handle_request` shows one kind of request
 * and `--tag trace_id=...` one request.
 */
#ifndef RECCE_CLI_RECORD_SPANS_H
#define RECCE_CLI_RECORD_SPANS_H

#include <stddef.h>
#include <sys/types.h>

struct profile;
struct sampler;
struct span_follow;

/* The follower of pids[0..n), or NULL when there are none (dies when out
 * of memory). */
struct span_follow *record_spans_new(const pid_t *pids, size_t n);

/* sampler_run() with the spans followed in the same loop. */
int record_spans_run(struct sampler *s, struct span_follow *f);

/*
 * Labels p's samples (p has a timeline, whose times count from start_ns,
 * CLOCK_REALTIME) and says how many fell in spans, and which could not be
 * told. keep_timeline: the user asked for the timeline; otherwise it is
 * dropped once used. Returns 0, or 1 when the labels could not be made
 * (said; the profile is still whole).
 */
int record_spans_label(struct span_follow *f, struct profile *p, int64_t start_ns,
		       int keep_timeline);

#endif
