/*
 * The tracer's --fast path (see tracer.h and inject/fast-set.h): which
 * functions it refuses, its probes planned and placed in each target
 * (each function's entry and, with returns, the exits its trampolines
 * hook), and the rings of every target read, counted and let go.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace/trace-exits.h"
#include "trace/tracer-internal.h"
#include "proc/proc-maps.h"
#include "util/clock.h"

static const char *tracer_fast_refused(struct tracer *t, size_t i, pid_t pid, uint64_t addr)
{
	struct trace_exits ex = {0};
	struct tramp_exit *exits = NULL;
	size_t n = 0, undecided = 0;
	const char *why = NULL;

	if (t->cfg.want_return &&
	    trace_exits_fast(&t->res.fns[i], addr, &ex, &exits, &n, &undecided) != 0)
		why = "its returns cannot be found: its size is unknown, or its code does not "
		      "decode";
	if (!why)
		why = fast_refusal(pid, addr, t->res.fns[i].size, exits, n, undecided);
	free(exits);
	trace_exits_release(&ex);
	return why;
}

/* The probes of function i, at addr in the target of set fs: its entry
 * and, with returns, the exits its trampolines hook. */
static int add_fast(struct tracer *t, struct fast_set *fs, size_t i, uint64_t addr)
{
	struct trace_exits ex = {0};
	struct tramp_exit *exits = NULL;
	size_t n = 0, undecided = 0;
	int err = 0;

	if (!tracer_push_probe(t, (int)i, PROBE_ENTRY))
		return -ENOMEM;
	int entry = (int)t->nprobes - 1;
	if (t->cfg.want_return)
		err = trace_exits_fast(&t->res.fns[i], addr, &ex, &exits, &n, &undecided);
	for (size_t k = 0; k < n && !err; k++) {
		struct probe_of *p = tracer_push_probe(t, (int)i, PROBE_EXIT);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		p->how = ex.v[exits[k].probe].how;
		exits[k].probe = (int)t->nprobes - 1;
	}
	if (!err)
		err = fast_set_add(fs, addr, t->res.fns[i].size, entry, exits, n, undecided);
	if (!err && t->cfg.want_return) {
		t->methods.exits++;
		t->methods.exit_probes += n;
		t->methods.unprobed_jumps += undecided;
	}
	free(exits);
	trace_exits_release(&ex);
	return err;
}

/* The library loaded into pid, its probes planned and its jumps written;
 * -ESRCH when it has exited. */
static int start_one(struct tracer *t, pid_t pid, struct fast_set **fs)
{
	int err = fast_set_new(pid, t->sym, fs, &t->fast_info);
	if (err)
		return err == -ESRCH ? err : tracer_fail(t, TRACER_FAST, err, pid);
	for (size_t i = 0; i < t->res.n && !err; i++) {
		const struct trace_fn *fn = &t->res.fns[i];
		uint64_t addr;
		/* Refused, or not in this process. */
		if (t->refused[i] || procs_file_addr(t->procs, pid, fn->file, fn->vaddr, &addr))
			continue;
		err = add_fast(t, *fs, i, addr);
	}
	if (!err)
		err = fast_set_attach(*fs, 3000);
	if (err && err != -ESRCH && fast_set_stopped(*fs))
		return tracer_fail(t, TRACER_FAST, err, pid); /* said as a stopped process */
	return err && err != -ESRCH ? tracer_fail(t, TRACER_PATCH, err, pid) : err;
}

static int tracer_fast_remove(struct tracer *t);

static int tracer_fast_start(struct tracer *t)
{
	size_t started = 0;

	t->targets = t->cfg.pids;
	t->ntargets = t->cfg.npids;
	t->fast = calloc(t->cfg.npids, sizeof(*t->fast));
	if (!t->fast)
		return -ENOMEM;
	for (size_t p = 0; p < t->cfg.npids; p++) {
		int err = start_one(t, t->cfg.pids[p], &t->fast[t->nfast]);
		t->nfast++;
		if (err == -ESRCH)
			continue; /* exited: the others are traced */
		if (err) {
			tracer_fast_remove(t);
			return err;
		}
		started++;
	}
	if (!started)
		return tracer_fail(t, TRACER_EXITED, -ESRCH, t->cfg.pids[0]);
	t->mono_to_real = (uint64_t)time_mono_to_real();
	trace_limits_init(&t->limits, t->cfg.count, t->cfg.time_ns, t->cfg.rate_n, t->cfg.rate_ms,
			  time_now_ns(CLOCK_MONOTONIC));
	return 0;
}

static int tracer_fast_read(struct tracer *t, int (*cb)(const struct uprobe_hit *, void *))
{
	int rc = 0;

	for (size_t i = 0; i < t->nfast && !rc; i++)
		rc = fast_set_read(t->fast[i], cb, t);
	return rc;
}

/* A hit's ring's losses, before it at most and up to it at least: a
 * thread's calls are paired by its own ring's. */
static uint64_t tracer_fast_lost_at(const struct tracer *t, const struct uprobe_hit *h)
{
	(void)t;
	return h->drops;
}

static uint64_t tracer_fast_lost_before(const struct tracer *t, const struct uprobe_hit *h)
{
	(void)t;
	return h->drops_before;
}

/* A thread writes its own ring (a record names its thread). */
static int tracer_fast_lost_thread(const struct tracer *t, uint32_t tid, uint64_t *lost)
{
	int rc = -1;

	for (size_t i = 0; i < t->nfast; i++) {
		uint64_t n;
		if (fast_set_thread_lost(t->fast[i], (int32_t)tid, &n) == 0 && (rc || n > *lost)) {
			*lost = n;
			rc = 0;
		}
	}
	return rc;
}

static uint64_t tracer_fast_lost(const struct tracer *t)
{
	uint64_t lost = 0;

	for (size_t i = 0; i < t->nfast; i++)
		lost += fast_set_lost(t->fast[i]);
	return lost;
}

/* Records lost in all targets, and their children: forked and not
 * traced, calls from those recce could not find, those whose jumps it saw
 * not removed. */
static void tracer_fast_stats(const struct tracer *t, struct tracer_stats *st)
{
	st->lost = tracer_fast_lost(t);
	for (size_t i = 0; i < t->nfast; i++) {
		st->fast_forks += fast_set_forks(t->fast[i]);
		st->fast_unfound += fast_set_unfound_calls(t->fast[i]);
		st->fast_children_left += fast_set_children_left(t->fast[i]);
	}
}

static int tracer_fast_remove(struct tracer *t)
{
	int err = 0;

	for (size_t i = 0; i < t->nfast; i++) {
		int e = fast_set_remove_all(t->fast[i]);
		err = err ? err : e;
	}
	return err;
}

static void tracer_fast_free(struct tracer *t)
{
	/* Where the code could not be put back, the library's watchdog does
	 * it as recce exits. */
	tracer_fast_remove(t);
	for (size_t i = 0; i < t->nfast; i++)
		fast_set_free(t->fast[i]);
	free(t->fast);
	t->fast = NULL;
	t->nfast = 0;
}

const struct tracer_backend tracer_fast = {
    .poll_ms = 2, /* the rings wake nobody: they are looked at this often */
    .refused_at = tracer_fast_refused,
    .start = tracer_fast_start,
    .read = tracer_fast_read,
    .lost = tracer_fast_lost,
    .lost_at = tracer_fast_lost_at,
    .lost_before = tracer_fast_lost_before,
    .lost_thread = tracer_fast_lost_thread,
    .remove = tracer_fast_remove,
    .read_after_remove = 1,
    .sysv_args_only = 1,
    .stats = tracer_fast_stats,
    .release = tracer_fast_free,
};
