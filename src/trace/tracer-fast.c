/*
 * The tracer's --fast path (see tracer.h and trace/fast-set.h): which
 * functions it refuses, and its probes planned and placed: each
 * function's entry and, with returns, the exits its trampolines hook.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace/trace-exits.h"
#include "trace/tracer-internal.h"
#include "proc/proc-maps.h"
#include "util/clock.h"

/* --fast: why function i, at addr in the target, cannot be traced so. */
const char *tracer_fast_refused(struct tracer *t, size_t i, uint64_t addr)
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
		why = fast_refusal(t->cfg.pids[0], addr, t->res.fns[i].size, exits, n, undecided);
	free(exits);
	trace_exits_release(&ex);
	return why;
}

/* --fast: the probes of function i, at addr in the target: its entry and,
 * with returns, the exits its trampolines hook. */
static int add_fast(struct tracer *t, size_t i, uint64_t addr)
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
		err = fast_set_add(t->fast, addr, t->res.fns[i].size, entry, exits, n, undecided);
	if (!err && t->cfg.want_return) {
		t->methods.exits++;
		t->methods.exit_probes += n;
		t->methods.unprobed_jumps += undecided;
	}
	free(exits);
	trace_exits_release(&ex);
	return err;
}

/* --fast: the library loaded into the one target, a trampoline for each
 * function, and the jumps written. */
int tracer_fast_start(struct tracer *t)
{
	pid_t pid = t->cfg.pids[0];
	int err;

	t->targets = t->cfg.pids;
	t->ntargets = 1;
	err = fast_set_new(pid, t->sym, &t->fast, &t->fast_info);
	if (err)
		return tracer_fail(t, TRACER_FAST, err, pid);
	for (size_t i = 0; i < t->res.n && !err; i++) {
		const struct trace_fn *fn = &t->res.fns[i];
		uint64_t addr;
		if (t->refused[i])
			continue;
		err = procs_file_addr(t->procs, pid, fn->file, fn->vaddr, &addr);
		if (!err)
			err = add_fast(t, i, addr);
	}
	if (!err)
		err = fast_set_attach(t->fast, 3000);
	if (err)
		return tracer_fail(t, TRACER_PATCH, err, pid);
	t->mono_to_real = time_now_ns(CLOCK_REALTIME) - time_now_ns(CLOCK_MONOTONIC);
	trace_limits_init(&t->limits, t->cfg.count, t->cfg.time_ns, t->cfg.rate_n, t->cfg.rate_ms,
			  time_now_ns(CLOCK_MONOTONIC));
	return 0;
}
