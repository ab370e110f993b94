/*
 * The tracer's probes through the kernel (see tracer-internal.h): perf
 * uprobes or BPF links (perf/uprobe.h) on each function's entry and its
 * exits (or a uretprobe), attached to every thread of the targets, new
 * processes followed where the kernel can, and the hits read from the
 * per-CPU rings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf/uprobe.h"
#include "proc/family.h"
#include "proc/launch.h"
#include "proc/procstat.h"
#include "proc/self.h"
#include "proc/tasks.h"
#include "symbols/func-exits.h"
#include "symbols/usdt.h"
#include "trace/trace-exits.h"
#include "trace/py-call.h"
#include "trace/py-stack.h"
#include "trace/tracer-internal.h"
#include "trace/usdt-args.h"
#include "util/array.h"
#include "util/clock.h"

/*
 * How often the kernel wakes recce, in hits per CPU. A wakeup costs the
 * traced thread several times what the probe does, so recce takes the
 * hits in batches: a quarter of the smallest limit, so that the count and
 * the breaker still stop the trace within a fraction of their count, and
 * at most WAKEUP_MAX_HITS, so that a flood is seen (and the breaker trips)
 * within a few milliseconds. Between wakeups, the poll timeout (POLL_MS)
 * shows slow trickles of calls without delay a person notices.
 *
 * A string argument (char *) is read from the target's memory when recce
 * handles the call, so it must be handled while the call is still
 * running: a trace that shows strings wakes recce on every hit, and pays
 * for it.
 */
#define WAKEUP_MAX_HITS 256
#define POLL_MS		50
#define PY_RING_PAGES	512

static unsigned wakeup_hits(const struct tracer *t)
{
	uint64_t n = WAKEUP_MAX_HITS * 4;

	for (size_t i = 0; i < t->res.n; i++)
		for (int k = 0; k < t->sigs[i].nparams; k++)
			if (t->sigs[i].params[k].kind == TRACE_ARG_STR)
				return 1;
	if (t->cfg.count > 0 && t->cfg.count < n)
		n = t->cfg.count;
	if (t->cfg.rate_n > 0 && t->cfg.rate_n < n)
		n = t->cfg.rate_n;
	return n / 4 ? (unsigned)(n / 4) : 1;
}

/*
 * New processes are traced from their first instruction when the kernel
 * can follow forks for recce's BPF program: only when no process outside
 * the targets' families maps a probed file, since the probes then hold a
 * breakpoint in every process that maps it (the program returning at once
 * for the others). Otherwise t->fork_outsider names the first such
 * process and new ones are traced from when recce reads of them.
 */
static void follow_forks(struct tracer *t)
{
	size_t n = t->res.n ? t->res.n : 1;
	struct proc_file_id *files = calloc(n, sizeof(*files));
	const char **paths = calloc(n, sizeof(*paths));
	pid_t *family = NULL;
	size_t nfiles = 0, nfamily = 0, cap = 0, which = 0;

	if (!files || !paths)
		goto out;
	for (size_t i = 0; i < t->res.n; i++) {
		struct stat st;
		if (tracer_refused(t, i) || stat(t->res.fns[i].path, &st) < 0)
			continue;
		struct proc_file_id id = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
		size_t k = 0;
		while (k < nfiles && (files[k].ino != id.ino || files[k].dev != id.dev))
			k++;
		if (k == nfiles) {
			paths[nfiles] = t->res.fns[i].object;
			files[nfiles++] = id;
		}
	}
	for (size_t p = 0; p < t->ntargets; p++) {
		pid_t *kids = NULL;
		size_t nkids = 0;
		pid_t *v = array_reserve(family, &cap, nfamily + 1, sizeof(*v));
		if (!v || proc_descendants(t->targets[p], &kids, &nkids) < 0 ||
		    !(v = array_reserve(v, &cap, nfamily + 1 + nkids, sizeof(*v)))) {
			free(kids);
			t->fork_outsider = -ENOMEM;
			goto out;
		}
		family = v;
		family[nfamily++] = t->targets[p];
		memcpy(family + nfamily, kids, nkids * sizeof(*kids));
		nfamily += nkids;
		free(kids);
	}
	t->fork_outsider = proc_file_outsider(files, nfiles, family, nfamily, &which);
	if (t->fork_outsider == 0)
		t->fork_err = uprobe_set_follow_forks(t->up);
	if (t->fork_outsider > 0) {
		/* Named now: by the end its id may be another's. */
		struct procstat_reader r;
		struct procstat_task task;
		if (procstat_reader_init(&r, NULL) == 0) {
			if (procstat_read_process(&r, t->fork_outsider, &task) == 0)
				snprintf(t->fork_outsider_comm, sizeof(t->fork_outsider_comm), "%s",
					 task.comm);
			procstat_reader_release(&r);
		}
		t->fork_outsider_file = paths[which];
	}
out:
	free(files);
	free(paths);
	free(family);
}

/* Attaches the probes to every thread of every target; a target that
 * exited meanwhile is skipped, the others are traced. */
static int attach_targets(struct tracer *t)
{
	struct proc_ids tids;
	size_t attached = 0;
	int err = 0;

	if (uprobe_set_uses_links(t->up))
		follow_forks(t);
	proc_ids_init(&tids);
	for (size_t p = 0; p < t->ntargets && !err; p++) {
		/* A command is looked at its first call, once it runs Python. */
		if (t->py_stack && !t->cfg.argv)
			py_stack_watch(t->py_stack, t->up, t->targets[p]);
		ssize_t n = proc_ids_list_tasks(&tids, NULL, t->targets[p], SIZE_MAX);
		int rc =
		    n > 0 ? uprobe_set_attach(t->up, t->targets[p], tids.ids, (size_t)n) : -ESRCH;
		if (rc == -ESRCH)
			continue; /* exited: the others are traced */
		if (rc < 0) {
			t->failed_path = uprobe_set_error_path(t->up);
			err = tracer_fail(t, TRACER_ATTACH, rc, t->targets[p]);
			break;
		}
		attached++;
	}
	proc_ids_release(&tids);
	if (!err && !attached)
		err = tracer_fail(t, TRACER_EXITED, -ESRCH, t->targets[0]);
	return err;
}

static int add_probe(struct tracer *t, int fn, uint64_t offset, enum probe_role role,
		     const struct func_exit *how)
{
	const struct trace_fn *f = &t->res.fns[fn];
	int probe = uprobe_set_add(t->up, f->path, offset, role == PROBE_URETPROBE);
	if (probe < 0)
		return probe;
	/* The Python callers: of a Python call, and with --stack of any;
	 * for --caller alone, the first few frames. */
	if (tracer_py_frames(t) && role == PROBE_ENTRY &&
	    (f->py == TRACE_PY_ENTRY || (!f->py && t->cfg.want_stack)))
		uprobe_set_py_walk(t->up, probe, !t->cfg.want_stack);
	if (f->usdt) {
		/* Its semaphore raised while it is in; its memory operand
		 * copied when it fires. */
		const struct usdt_arg *a = f->usdt->args;
		struct usdt_copy c;
		int name_reg, file_reg;
		usdt_args_copy(f->usdt, usdt_spec(t, (size_t)fn), &c);
		if (f->usdt->sema_offset)
			uprobe_set_semaphore(t->up, probe, f->usdt->sema_offset);
		/* A Python call's names, read before the code object that
		 * holds them can go. */
		if (f->py == TRACE_PY_ENTRY &&
		    py_call_registers(f->usdt, &name_reg, &file_reg) == 0)
			uprobe_set_capture_strings(t->up, probe, name_reg, file_reg);
		else if (!f->py && c.str[0] >= 0)
			uprobe_set_capture_strings(t->up, probe, a[c.str[0]].reg,
						   a[c.str[c.str[1] >= 0]].reg);
		else if (!f->py && c.mem >= 0)
			uprobe_set_capture_at(t->up, probe, a[c.mem].reg, (int)a[c.mem].value,
					      a[c.mem].size, 0);
	}
	/* At a return, rax holds the address of an object returned in
	 * memory: the probe reads the object there and then, before the
	 * caller can change it. */
	const struct trace_sig *sig = &t->sigs[fn];
	/* At a call, its string arguments, there and then (with its call
	 * chain, for --caller and --stack): a caller's buffer may be
	 * rewritten, a process may exit, before recce reads them; where the
	 * probe cannot (a page not yet in), recce reads them late. */
	struct trace_str_plan plan;
	trace_args_str_plan(sig, &plan);
	int copy = role == PROBE_ENTRY && !f->usdt && plan.n;
	if (copy && plan.len_reg >= 0)
		uprobe_set_capture_counted(t->up, probe, plan.reg[0], plan.len_reg);
	else if (copy)
		uprobe_set_capture_strings(t->up, probe, plan.reg[0], plan.reg[plan.n - 1]);
	int at_return = role == PROBE_URETPROBE || (how && how->kind == FUNC_EXIT_RET);
	int str = trace_args_string_result(sig);
	if (sig->known && sig->ret_kind == TRACE_ARG_OBJECT && sig->ret_object.size && at_return)
		uprobe_set_capture(t->up, probe, sig->ret_object.size, sig->ret_object.string);
	else if (str >= 0 && at_return)
		/* A string result (Go's, Rust's &str): its text, then and
		 * there, as a string argument is read at the call. */
		uprobe_set_capture_counted(t->up, probe, sig->rets[str].reg, sig->rets[str].reg2);
	struct probe_of *p = tracer_push_probe(t, fn, role);
	if (!p)
		return -ENOMEM;
	if (how)
		p->how = *how;
	return 0;
}

/* The returns of fn: probes on its exits, or a uretprobe when the config
 * asks for the older method. */
static int add_return_probes(struct tracer *t, int fn)
{
	struct trace_exits ex = {0};
	size_t bad = 0;
	int err;

	if (t->cfg.return_uretprobe) {
		t->methods.uretprobe++;
		return add_probe(t, fn, t->res.fns[fn].offset, PROBE_URETPROBE, NULL);
	}
	err = trace_exits_find(&t->res.fns[fn], &ex, &bad);
	for (size_t i = 0; !err && i < ex.n; i++)
		err = add_probe(t, fn, ex.v[i].offset, PROBE_EXIT, &ex.v[i].how);
	if (!err) {
		t->methods.exits++;
		t->methods.exit_probes += ex.n;
		t->methods.unprobed_jumps += ex.unprobed;
	}
	trace_exits_release(&ex);
	if (err && err != -ENOMEM) {
		t->failed_fn = fn;
		t->failed_offset = bad;
		return tracer_fail(t, TRACER_RETURNS, err, 0);
	}
	return err;
}

static int start(struct tracer *t)
{
	const struct tracer_config *c = &t->cfg;
	int err;

	proc_raise_fd_limit(); /* probes cost one descriptor per thread and CPU */
	if (c->argv) {
		err = launch_held(&t->child, c->argv, c->child_sigmask);
		if (err)
			return tracer_fail(t, TRACER_LAUNCH, err, 0);
		t->targets = &t->child.pid;
		t->ntargets = 1;
		if (c->held)
			c->held(c->held_arg, t->child.pid);
	} else {
		t->targets = c->pids;
		t->ntargets = c->npids;
	}
	for (size_t i = 0; i < t->res.n; i++) {
		const struct trace_fn *f = &t->res.fns[i];
		/* A Python function's returns matter only with --return. */
		if (t->refused[i] || (f->py == TRACE_PY_RETURN && !c->want_return))
			continue;
		err = add_probe(t, (int)i, trace_entry_offset(f), PROBE_ENTRY, NULL);
		if (!err && c->want_return && !f->usdt)
			err = add_return_probes(t, (int)i);
		if (err)
			goto out_cancel;
	}
	if ((err = attach_targets(t)) < 0)
		goto out_cancel;
	t->mono_to_real = (uint64_t)time_mono_to_real();
	trace_limits_init(&t->limits, c->count, c->time_ns, c->rate_n, c->rate_ms,
			  time_now_ns(CLOCK_MONOTONIC));
	if (c->argv && (err = launch_go(&t->child)) < 0) {
		uprobe_set_remove_all(t->up);
		return tracer_fail(t, TRACER_EXEC, err, 0);
	}
	return 0;

out_cancel:
	/* The target first: no probe stays, and the command never runs. */
	uprobe_set_remove_all(t->up);
	if (c->argv)
		launch_cancel(&t->child);
	return err;
}

/* An entry the kernel cannot probe (see trace_entry_unprobeable); and,
 * with --return, among several functions patterns matched, one whose exits
 * cannot be found: it is left out and said, where alone it refuses the
 * trace with the reason (add_return_probes). */
static const char *refused(struct tracer *t, size_t i)
{
	const char *why =
	    trace_entry_unprobeable(&t->res.fns[i], trace_entry_offset(&t->res.fns[i]));

	if (why || !t->cfg.want_return || t->cfg.return_uretprobe || t->res.n < 2 ||
	    t->res.fns[i].usdt)
		return why;
	return trace_exits_unknown(&t->res.fns[i]);
}

/* Data pages per CPU ring: the config's, else for Python calls, which
 * come in bursts of thousands a request (every call a hit, shown or
 * not), and for hits that carry a stack copy (kilobytes each), 2 MiB;
 * else the default. */
static size_t ring_pages(const struct tracer *t)
{
	if (t->cfg.ring_pages)
		return t->cfg.ring_pages;
	if (t->cfg.want_stack && t->cfg.stack_bytes)
		return PY_RING_PAGES;
	for (size_t i = 0; i < t->res.n; i++)
		if (t->res.fns[i].py)
			return PY_RING_PAGES;
	return 0;
}

static int open_buffers(struct tracer *t)
{
	const struct tracer_config *c = &t->cfg;
	struct uprobe_set_config ucfg = {
	    /* The program that reads Python frames takes the call chain
	     * too. */
	    .callchain = c->want_stack || c->want_caller || t->py_qualified,
	    .stack_bytes = c->want_stack ? c->stack_bytes : 0,
	    .ring_pages = ring_pages(t),
	    .wakeup_hits = wakeup_hits(t),
	    .no_bpf = c->no_bpf,
	    .no_links = c->no_links,
	    .max_events = c->max_events,
	    .py_frames = tracer_py_frames(t),
	};
	int err = uprobe_set_new(&ucfg, &t->up);

	return err ? tracer_fail(t, TRACER_BUFFERS, err, 0) : 0;
}

static size_t wake_fds(const struct tracer *t, int *fds, size_t n)
{
	return t->up ? uprobe_set_pollfds(t->up, fds, n) : 0;
}

static int read_hits(struct tracer *t, int (*cb)(const struct uprobe_hit *, void *))
{
	return uprobe_set_read(t->up, cb, t);
}

/* With the BPF program, its own count, which grows the moment a hit is
 * dropped; else what the kernel has reported, which comes later. */
static uint64_t lost(const struct tracer *t)
{
	if (!t->up)
		return 0;
	return uprobe_set_uses_bpf(t->up) ? uprobe_set_drops(t->up) : uprobe_set_stats(t->up)->lost;
}

/* With the BPF program, the count is carried by the hit itself. */
static uint64_t lost_at(const struct tracer *t, const struct uprobe_hit *h)
{
	return t->up && uprobe_set_uses_bpf(t->up) ? h->drops : lost(t);
}

/* In event mode, threads get their probes once recce reads of them. */
static uint64_t blind(const struct tracer *t)
{
	return t->up ? uprobe_set_stats(t->up)->late_until_ns : 0;
}

static int remove_all(struct tracer *t)
{
	uprobe_set_remove_all(t->up);
	return 0;
}

static void stats(const struct tracer *t, struct tracer_stats *st)
{
	const struct uprobe_stats *us = t->up ? uprobe_set_stats(t->up) : NULL;

	if (!us)
		return;
	/* With the BPF program, it counts each hit it could not write at
	 * once; the kernel's record of them comes only with a later hit,
	 * which a trace that stops may never read. */
	st->lost = lost(t) > us->lost ? lost(t) : us->lost;
	st->malformed = us->malformed;
	st->unfollowed = us->unfollowed;
	st->followed = us->followed;
	st->followed_late = us->followed_late;
	st->uses_links = uprobe_set_uses_links(t->up);
	st->uses_bpf = uprobe_set_uses_bpf(t->up);
}

static void release(struct tracer *t)
{
	uprobe_set_free(t->up); /* removes any probe still in place */
	t->up = NULL;
}

void tracer_events_wanted(const struct tracer *t, size_t *events, size_t *probes, size_t *ncpus)
{
	*events = uprobe_set_events_wanted(t->up, ncpus);
	*probes = t->nprobes;
}

const struct tracer_backend tracer_uprobes = {
    .poll_ms = POLL_MS,
    .refused_entry = refused,
    .open = open_buffers,
    .start = start,
    .wake_fds = wake_fds,
    .read = read_hits,
    .lost = lost,
    .lost_at = lost_at,
    .blind = blind,
    .remove = remove_all,
    .stats = stats,
    .release = release,
};
