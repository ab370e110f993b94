/*
 * The capture engine (see capture.h): the sampler's loop in a second
 * thread, stopped through an eventfd when the tracer's loop returns.
 */
#include "capture/capture.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/array.h"

struct capture {
	struct capture_config cfg;
	struct tracer *tracer;
	struct sampler *sampler;
	int sampler_stop; /* an eventfd: the sampler's stop descriptor */
	int sampling_failed;
	int sampler_err; /* sampler_run's result */
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
	c->sampler_stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->sampler_stop < 0) {
		free(c);
		return -errno;
	}
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
	sc.stack_bytes = cfg->stack_bytes;
	sc.stop_fd = c->sampler_stop;
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

static void *sampler_thread(void *arg)
{
	struct capture *c = arg;

	c->sampler_err = sampler_run(c->sampler);
	return NULL;
}

int capture_run(struct capture *c)
{
	pthread_t th;
	sigset_t all, old;

	/* The sampling thread takes no signal: the stop signals are the
	 * tracer's to see, through its stop descriptor. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int err = pthread_create(&th, NULL, sampler_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	int run_err = tracer_run(c->tracer);
	uint64_t one = 1;
	if (write(c->sampler_stop, &one, sizeof(one)) != sizeof(one))
		run_err = run_err ? run_err : -errno;
	pthread_join(th, NULL);
	if (c->oom && !run_err)
		run_err = -ENOMEM;
	return run_err ? run_err : c->sampler_err;
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
	if (c->sampler_stop >= 0)
		close(c->sampler_stop);
	free(c->calls);
	free(c);
}
