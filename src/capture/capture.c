/*
 * The capture engine (see capture.h): one event loop that the capture
 * owns, with the tracer and the sampler attached to it; it runs until the
 * tracer is done (a limit, a signal, the target's exit).
 */
#include "capture/capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/evloop.h"

struct capture {
	struct capture_config cfg;
	struct tracer *tracer;
	struct sampler *sampler;
	int sampling_failed;
	struct trace_record *calls;
	size_t ncalls, calls_cap;
	int oom;
};

/* The tracer's sink: keeps each return (it carries its call's arguments). */
static void keep_call(void *arg, const struct trace_record *r, const struct tracer_frame *stack,
		      size_t nstack)
{
	struct capture *c = arg;

	(void)stack;
	(void)nstack;
	if (!r || r->kind != TRACE_RETURN)
		return;
	struct trace_record *n = array_reserve(c->calls, &c->calls_cap, c->ncalls + 1, sizeof(*n));
	if (!n) {
		c->oom = 1;
		return;
	}
	c->calls = n;
	c->calls[c->ncalls++] = *r;
}

int capture_new(const struct capture_config *cfg, struct capture **out)
{
	struct capture *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	*out = c;
	struct tracer_config tc = {
	    .pids = &c->cfg.pid,
	    .npids = 1,
	    .patterns = cfg->patterns,
	    .npatterns = cfg->npatterns,
	    .max_probes = cfg->max_probes,
	    .want_args = 1,
	    .want_return = 1,
	    .count = cfg->calls,
	    .time_ns = cfg->time_ns,
	    .rate_n = cfg->rate_n,
	    .rate_ms = cfg->rate_ms,
	    .stop_fd = cfg->stop_fd,
	    .sink = keep_call,
	    .sink_arg = c,
	};
	int err = tracer_new(&tc, &c->tracer);
	if (err)
		return err;
	struct sampler_config sc = {0};
	sc.pids = &c->cfg.pid;
	sc.npids = 1;
	sc.freq = cfg->freq;
	sc.dwarf = cfg->dwarf;
	sc.fp_after = cfg->fp_after;
	sc.stack_bytes = cfg->stack_bytes;
	sc.ring_pages = cfg->ring_pages;
	sc.stop_fd = -1; /* the tracer's stop is the capture's */
	sc.procs = cfg->procs;
	sc.agg = cfg->agg;
	sc.resolver = cfg->resolver;
	return sampler_new(&sc, &c->sampler);
}

int capture_start(struct capture *c)
{
	/* Sampling first, so that the first call is sampled from its start. */
	int err = sampler_start(c->sampler);

	if (err) {
		c->sampling_failed = 1;
		return err;
	}
	return tracer_start(c->tracer);
}

int capture_sampling_failed(const struct capture *c)
{
	return c->sampling_failed;
}

int capture_loop(struct tracer *t, struct sampler *s, int *trace_err, int *sampling_err)
{
	struct evloop loop;

	evloop_init(&loop);
	/* The sampler stops with the tracer: its own stop (its target's exit,
	 * an error) only takes it out of the loop. */
	int err = sampler_attach(s, &loop, NULL, NULL);
	if (!err)
		err = tracer_attach(t, &loop, evloop_stop_done, &loop);
	if (!err)
		err = evloop_run(&loop);
	*trace_err = tracer_finish(t);
	int serr = sampler_drain(s);
	evloop_release(&loop);
	int ferr = sampler_finish(s);
	*sampling_err = serr ? serr : ferr;
	return err;
}

int capture_run(struct capture *c)
{
	int terr, serr;
	int err = capture_loop(c->tracer, c->sampler, &terr, &serr);

	if (c->oom && !err)
		err = -ENOMEM;
	err = err ? err : terr;
	return err ? err : serr;
}

size_t capture_calls(const struct capture *c, const struct trace_record **calls)
{
	*calls = c->calls;
	return c->ncalls;
}

struct tracer *capture_tracer(struct capture *c)
{
	return c->tracer;
}

struct sampler *capture_sampler(struct capture *c)
{
	return c->sampler;
}

void capture_free(struct capture *c)
{
	if (!c)
		return;
	tracer_free(c->tracer);
	sampler_free(c->sampler);
	free(c->calls);
	free(c);
}
