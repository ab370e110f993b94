/*
 * The engine of `recce capture`: the next calls of a function in a live
 * process, each with the samples its thread took while it ran. Two
 * engines of the layer below run at once, attached to one event loop the
 * capture owns: the sampler (sampling/sampler.h) samples every thread of
 * the process at a high rate into an aggregate with a timeline; the
 * tracer (tracer.h) probes the function's entry and returns and keeps
 * each finished call. When the tracer stops (the calls are in, a limit
 * fired, a signal came, the process exited), the sampler stops too. profile/capture-profile.h
 * then cuts the recording into the calls.
 *
 * The target is never stopped; its probes come out as trace's do, and the
 * sampling events with the sampler.
 *
 * Ownership: capture_new() returns a heap object freed by capture_free();
 * the caller owns the config's arrays and engines (registry, aggregate,
 * resolver) and keeps them alive until then.
 */
#ifndef RECCE_CAPTURE_CAPTURE_H
#define RECCE_CAPTURE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampling/sampler.h"
#include "trace/trace-event.h"
#include "trace/tracer.h"

struct capture_config {
	pid_t pid;
	const struct trace_pattern *patterns;
	size_t npatterns;
	uint64_t calls;		  /* calls to capture */
	uint64_t time_ns;	  /* give up after this long; 0: no limit */
	uint64_t rate_n, rate_ms; /* the tracer's circuit breaker */
	size_t max_probes;
	unsigned freq; /* samples per second of CPU time, per thread */
	int dwarf;     /* the copied stack unwound (--call-graph dwarf or auto) */
	int fp_after;  /* auto: then frame pointers (sampler.h) */
	uint32_t stack_bytes;
	size_t ring_pages; /* sampling: data pages per CPU ring; 0: the default */
	int stop_fd;	   /* readable when a person asks to stop; -1: none */
	struct proc_registry *procs;
	struct aggregate *agg; /* with a timeline enabled */
	struct resolver *resolver;
};

struct capture;

/* Makes the tracer (resolving the patterns) and the sampler. Sets *out
 * even when the tracer fails (but for -ENOMEM), so that capture_tracer()
 * can say why. */
int capture_new(const struct capture_config *cfg, struct capture **out);

/* Attaches the sampling, then the probes. 0 or -errno; a failed probe step
 * is the tracer's (tracer_failure()), sampling's is -EACCES, -ESRCH... and
 * capture_sampling_failed() says it was sampling. */
int capture_start(struct capture *c);
int capture_sampling_failed(const struct capture *c);

/* Runs until the tracer stops; returns 0 or the first -errno of either. */
int capture_run(struct capture *c);

/* The loop capture_run() runs, for any started tracer and sampler (trace
 * --slow --profile has its own): both attached to one loop until the
 * tracer stops (the sampler's own stop only takes it out of the loop),
 * then every probe out, the sampling drained and ended. Returns the
 * loop's error; *trace_err is the tracer's finish, *sampling_err the
 * sampler's drain or end, each 0 or -errno. */
int capture_loop(struct tracer *t, struct sampler *s, int *trace_err, int *sampling_err);

/* The finished calls, in the order they returned: their return records
 * (time, duration, arguments, return value). */
size_t capture_calls(const struct capture *c, const struct trace_record **calls);

struct tracer *capture_tracer(struct capture *c);
struct sampler *capture_sampler(struct capture *c);

void capture_free(struct capture *c);

#endif
