/*
 * The limits every trace runs under, on by default (redbug's defaults): a
 * count of events, a time limit, and a rate circuit breaker with
 * recon_trace's semantics: more than N events within one fixed window of MS
 * milliseconds trips it. Times are CLOCK_MONOTONIC nanoseconds given by
 * the caller, so the logic is testable without a clock.
 *
 * Ownership: struct trace_limits is a plain value filled by
 * trace_limits_init(); nothing to release.
 */
#ifndef RECCE_TRACE_LIMITS_H
#define RECCE_TRACE_LIMITS_H

#include <stdint.h>

#define TRACE_DEFAULT_COUNT   10
#define TRACE_DEFAULT_SECONDS 15
#define TRACE_DEFAULT_RATE_N  1000
#define TRACE_DEFAULT_RATE_MS 1000
/* With --fast (calls at in-process cost): 100 times more. */
#define TRACE_FAST_RATE_N 100000

enum trace_stop {
	TRACE_RUNNING = 0,
	TRACE_STOP_COUNT,   /* the event that reached --count: show it, then stop */
	TRACE_STOP_BREAKER, /* the event that tripped --limit: drop it and stop */
	TRACE_STOP_TIME,
	TRACE_STOP_EXITED, /* the targets exited */
	TRACE_STOP_SIGNAL, /* Ctrl-C or SIGTERM */
	TRACE_STOP_OUTPUT, /* the events could not be written (a full disk) */
};

struct trace_limits {
	uint64_t count_max;	  /* 0: no count limit */
	uint64_t time_ns;	  /* 0: no time limit */
	uint64_t rate_n, rate_ms; /* rate_n 0: no circuit breaker */
	uint64_t start_ns;
	uint64_t count;
	uint64_t window_start_ns, window_count;
	/* trace_limits_flood()'s last look: when, and the totals then. */
	uint64_t flood_ns, flood_seen, flood_lost;
	enum trace_stop stop; /* the first limit that fired */
};

void trace_limits_init(struct trace_limits *l, uint64_t count_max, uint64_t time_ns,
		       uint64_t rate_n, uint64_t rate_ms, uint64_t now_ns);

/* Accounts one event (a call, or a call and its return as one) at t.
 * Returns TRACE_RUNNING, TRACE_STOP_COUNT or TRACE_STOP_BREAKER; once a
 * limit has fired, returns it again for every later event. */
enum trace_stop trace_limits_event(struct trace_limits *l, uint64_t t);

/* The two halves of an event: the breaker's window only (an event seen,
 * shown or not: a Python call, every one of which costs the target a
 * trap), and the count only (one of them shown). */
enum trace_stop trace_limits_seen(struct trace_limits *l, uint64_t t);
enum trace_stop trace_limits_shown(struct trace_limits *l);

/* The breaker over what the target did, not only what recce kept up
 * with: given at now the totals of events seen and of events lost (made
 * by the target, never read: its rings were full), trips when, since its
 * last look at least one window (rate_ms) before, the two together came
 * at more than rate_n a window on average. Returns TRACE_STOP_BREAKER
 * then; else l->stop. */
enum trace_stop trace_limits_flood(struct trace_limits *l, uint64_t now_ns, uint64_t seen,
				   uint64_t lost);

/* Checks the time limit at now; returns l->stop (TRACE_STOP_TIME if the
 * time is up and nothing else fired first). */
enum trace_stop trace_limits_tick(struct trace_limits *l, uint64_t now_ns);

/* Records an outside stop (exit, signal) unless a limit fired first. */
void trace_limits_stop(struct trace_limits *l, enum trace_stop why);

/* Nanoseconds until the time limit, or UINT64_MAX without one. */
uint64_t trace_limits_remaining(const struct trace_limits *l, uint64_t now_ns);

/* Parses "N/MS" (both positive integers). Returns 0 or -EINVAL. */
int trace_limits_parse_rate(const char *s, uint64_t *n, uint64_t *ms);

#endif
