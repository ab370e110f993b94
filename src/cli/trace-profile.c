/*
 * The samples of a flight recorder's slow calls (see trace-profile.h):
 * record's engines set up as `record -e wall -p PID` sets them up, the
 * sampler seated in the tracer's loop (capture's loop), the shown slow
 * calls kept, and capture's cut into calls at the end.
 */
#include "cli/trace-profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/cmd-record.h"
#include "cli/dirs.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "capture/capture.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "profile/aggregate.h"
#include "profile/capture-profile.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "profile/timeline.h"
#include "sampling/sampler.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/outfile.h"

/* Slow calls in the profile at most: past them, counted and said. */
#define MAX_CALLS 10000

struct kept_call {
	uint32_t tid;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME */
	char *function, *title;
	char *file; /* NULL, or the file of a Python call */
	int file_cut;
};

struct trace_profile {
	const struct trace_args *a;
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct aggregate *agg;
	struct resolver *res;
	struct sampler *sampler; /* NULL until started */
	size_t ring_pages;
	pid_t child; /* the command, held: what the sampler watches */
	struct kept_call *calls;
	size_t ncalls, cap;
	uint64_t unkept; /* slow calls past MAX_CALLS, or out of memory */
};

struct trace_profile *trace_profile_new(const struct trace_args *a, size_t ring_pages)
{
	struct trace_profile *tp = calloc(1, sizeof(*tp));

	if (!tp)
		die("out of memory");
	tp->a = a;
	tp->sym = symbolizer_new();
	tp->procs = tp->sym ? procs_new(tp->sym) : NULL;
	tp->agg = aggregate_new();
	tp->res =
	    tp->procs ? resolver_new(tp->procs, tp->sym, 1000000000LL / TRACE_PROFILE_FREQ) : NULL;
	if (!tp->sym || !tp->procs || !tp->agg || !tp->res ||
	    dirs_use_cache(tp->sym, TABLE_BUILD_MAX) < 0 ||
	    resolver_name_values(tp->res, "samples", "wall") < 0)
		die("out of memory");
	aggregate_enable_timeline(tp->agg, TIMELINE_MAX_BYTES);
	if (!aggregate_timeline(tp->agg))
		die("out of memory");
	tp->ring_pages = ring_pages;
	return tp;
}

void trace_profile_start(struct trace_profile *tp, const pid_t *pids, size_t n)
{
	struct sampler_config cfg = {0};
	cfg.pids = pids;
	cfg.npids = n;
	cfg.cgroup_fd = -1;
	cfg.events = PERF_EVENTS_CPU_CLOCK | PERF_EVENTS_SWITCHES;
	cfg.freq = TRACE_PROFILE_FREQ;
	cfg.dwarf = 1; /* --call-graph auto, record's default */
	cfg.fp_after = 1;
	cfg.stack_bytes = CALL_GRAPH_STACK_BYTES;
	cfg.ring_pages = tp->ring_pages;
	cfg.stop_fd = -1; /* the tracer's stop is the sampling's */
	cfg.procs = tp->procs;
	cfg.agg = tp->agg;
	cfg.resolver = tp->res;
	cfg.sym = tp->sym;
	int err = sampler_new(&cfg, &tp->sampler);
	if (err)
		die("cannot start sampling: %s", strerror(-err));
	err = sampler_start(tp->sampler);
	if (err) {
		struct record_args ra;
		memset(&ra, 0, sizeof(ra));
		ra.pids = (pid_t *)pids; /* only read */
		ra.npids = n;
		record_say_start_failed(&ra, tp->sampler, err);
	}
}

void trace_profile_held(void *arg, pid_t pid)
{
	struct trace_profile *tp = arg;

	tp->child = pid; /* the sampler keeps the pointer */
	trace_profile_start(tp, &tp->child, 1);
}

void trace_profile_shown(void *arg, const struct trace_tree_slow *s)
{
	struct trace_profile *tp = arg;

	if (tp->ncalls == MAX_CALLS) {
		tp->unkept++;
		return;
	}
	struct kept_call *grown =
	    array_reserve(tp->calls, &tp->cap, tp->ncalls + 1, sizeof(*grown));
	if (grown)
		tp->calls = grown; /* the old array may be gone */
	char *function = strdup(s->function), *title = NULL;
	char *file = s->file ? strdup(s->file) : NULL;
	/* Numbered, so that two calls alike stay two frames. */
	if (asprintf(&title, "slow call %zu: %s", tp->ncalls + 1, s->title) < 0)
		title = NULL;
	if (!grown || !function || !title || (s->file && !file)) {
		free(function);
		free(title);
		free(file);
		tp->unkept++;
		return;
	}
	tp->calls[tp->ncalls++] =
	    (struct kept_call){s->tid, s->start_ns, s->end_ns, function, title, file, s->file_cut};
}

int trace_profile_run(struct trace_profile *tp, struct tracer *t)
{
	int terr, serr;
	if (!tp->sampler)
		return tracer_run(t); /* the command never started */
	int err = capture_loop(t, tp->sampler, &terr, &serr);

	if (serr)
		warning("sampling stopped early: %s; the slow calls' profile holds what was "
			"sampled before",
			strerror(-serr));
	return err ? err : terr;
}

/* The kept calls on the sampling's timeline (ns since its start). */
static struct capture_call *calls_on_timeline(const struct trace_profile *tp, int64_t start_ns)
{
	struct capture_call *c = calloc(tp->ncalls ? tp->ncalls : 1, sizeof(*c));

	for (size_t i = 0; c && i < tp->ncalls; i++) {
		const struct kept_call *k = &tp->calls[i];
		c[i].tid = k->tid;
		c[i].start_ns = (int64_t)k->start_ns - start_ns;
		c[i].end_ns = (int64_t)k->end_ns - start_ns;
		c[i].name = k->title;
		c[i].function = k->function;
		c[i].file = k->file;
		c[i].file_cut = k->file_cut;
	}
	return c;
}

int trace_profile_write(struct trace_profile *tp)
{
	const char *path = tp->a->profile;
	struct sampler_stats ss;

	if (!tp->sampler) {
		error("nothing was sampled: no profile written to %s", path);
		return RECCE_EXIT_ERROR;
	}
	sampler_get_stats(tp->sampler, &ss);
	if (resolver_add(tp->res, tp->agg, 0) < 0 || resolver_add_timeline(tp->res, tp->agg) < 0)
		die("out of memory while symbolizing");
	ss.unwind_ends[UNWIND_END_NO_INFO] = resolver_no_unwind_info(tp->res);
	ss.python.unplaced = resolver_python_unplaced(tp->res);
	struct profile *p = resolver_profile(tp->res);
	uint64_t dropped = aggregate_timeline(tp->agg)->dropped;
	struct sampler_info info = {tp->a->invocation, 1, ss.samples - dropped};
	sampler_describe(tp->sampler, &ss, &info, p);

	struct capture_call *calls = calls_on_timeline(tp, ss.start_ns);
	struct capture_counts counts;
	struct profile *q = NULL;
	int err = calls ? capture_profile(p, NULL, 0, calls, tp->ncalls, &q, &counts) : -ENOMEM;
	free(calls);
	if (!err)
		err = profile_add_comment(q, "slow calls: each under a frame of its own");
	for (size_t i = 0; !err && i < p->ncomments; i++)
		err = profile_add_comment(q, p->comments[i]);
	if (err) {
		profile_free(q);
		error("cannot build the profile of the slow calls: %s; nothing written to %s",
		      strerror(-err), path);
		return RECCE_EXIT_ERROR;
	}
	char where[4096] = "";
	const char *wrote = profile_write_or_say(q, path, where, sizeof(where));
	profile_free(q);
	note("the profile of %zu slow call%s: %" PRIu64 " samples of their threads while they "
	     "ran, on the CPU and off it; wrote %s",
	     tp->ncalls, tp->ncalls == 1 ? "" : "s", counts.kept, wrote);
	if (tp->unkept)
		warning("%" PRIu64 " more slow calls are not in the profile (it keeps %d)",
			tp->unkept, MAX_CALLS);
	if (counts.outside)
		warning("%" PRIu64 " samples taken during the slow calls lack the call's function "
			"on their stack (a stack the unwinder could not finish): left out",
			counts.outside);
	if (ss.lost)
		warning("the kernel lost %" PRIu64
			" records of the sampling when its ring was full "
			"(the threads switched faster than recce read): the slow calls' profile "
			"lacks the samples and waits among them",
			ss.lost);
	if (dropped)
		warning("the samples' timeline is full: the last %" PRIu64 " samples are not in "
			"the profile",
			dropped);
	return wrote == path ? 0 : RECCE_EXIT_ERROR;
}

void trace_profile_free(struct trace_profile *tp)
{
	if (!tp)
		return;
	sampler_free(tp->sampler);
	for (size_t i = 0; i < tp->ncalls; i++) {
		free(tp->calls[i].function);
		free(tp->calls[i].title);
		free(tp->calls[i].file);
	}
	free(tp->calls);
	resolver_free(tp->res);
	aggregate_free(tp->agg);
	procs_free(tp->procs);
	symbolizer_free(tp->sym);
	free(tp);
}
