/*
 * The tracer (see tracer.h): patterns to functions (trace-pattern),
 * signatures from DWARF (trace-args), call and return pairing by stack
 * address per thread or goroutine (trace-calls), --if (trace-cond), the
 * limits (trace-limits), histograms (trace-hist), and the loop over the
 * probes' hits, the stop descriptor and the targets' pidfds. The probes
 * themselves are a back end's (tracer-internal.h): uprobes through the
 * kernel (tracer-uprobes.c) or, with --fast, jumps into librecce-fast.so
 * (tracer-fast.c); the hits of both reach the same on_hit().
 */
#include "trace/tracer.h"
#include "trace/tracer-internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/uprobe.h"
#include "proc/frame-name.h"
#include "proc/lib-needs.h"
#include "proc/proc-maps.h"
#include "proc/procstat.h"
#include "proc/self.h"
#include "proc/unwind.h"
#include "symbols/symbolize.h"
#include "trace/arg-place.h"
#include "trace/py-call.h"
#include "trace/py-stack.h"
#include "trace/trace-calls.h"
#include "trace/trace-exits.h"
#include "trace/usdt-args.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/path.h"

const struct trace_usdt_spec *usdt_spec(const struct tracer *t, size_t i)
{
	const struct trace_fn *f = &t->res.fns[i];

	if (!f->usdt || f->pattern < 0 || (size_t)f->pattern >= t->cfg.npatterns)
		return NULL;
	return &t->cfg.patterns[f->pattern].spec;
}

int tracer_fail(struct tracer *t, enum tracer_step step, int err, pid_t pid)
{
	t->failed = step;
	t->failed_pid = pid;
	return err;
}

/* Adds the distinct ELF files mapped by pid to the objects to search. */
static int add_process_objects(struct tracer *t, pid_t pid)
{
	const struct proc_map *maps;
	size_t nmaps = procs_maps(t->procs, pid, &maps);

	for (size_t i = 0; i < nmaps; i++) {
		if (!maps[i].file || maps[i].path[0] != '/')
			continue;
		int seen = 0;
		for (size_t j = 0; j < t->nobjs && !seen; j++)
			seen = t->objs[j].file == maps[i].file;
		if (seen)
			continue;
		struct trace_object *no =
		    array_reserve(t->objs, &t->objs_cap, t->nobjs + 1, sizeof(*no));
		if (!no)
			return -ENOMEM;
		t->objs = no;
		no[t->nobjs++] =
		    (struct trace_object){maps[i].file, maps[i].path, maps[i].real_path};
	}
	return 0;
}

/* The objects to search: those the targets map or, for a command not
 * running yet, its executable and the shared libraries the dynamic
 * loader will map for it (lib-needs.h). */
static int find_objects(struct tracer *t)
{
	const struct tracer_config *c = &t->cfg;
	int err;

	for (size_t i = 0; i < c->npids; i++) {
		err = procs_scan(t->procs, c->pids[i]);
		if (err)
			return tracer_fail(t, TRACER_TARGET, err, c->pids[i]);
		if ((err = add_process_objects(t, c->pids[i])) < 0)
			return err;
	}
	if (c->npids)
		return 0;
	struct sym_file *f;
	t->program = launch_which(c->argv[0]);
	if (!t->program || symbolizer_open(t->sym, t->program, -1, &f) < 0)
		return tracer_fail(t, TRACER_PROGRAM, -ENOENT, 0);
	t->objs = array_reserve(NULL, &t->objs_cap, 1, sizeof(*t->objs));
	if (!t->objs)
		return -ENOMEM;
	t->objs[0] = (struct trace_object){f, t->program, NULL};
	t->nobjs = 1;
	if ((err = lib_needs(t->program, &t->libs, &t->nlibs)) < 0)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < t->nlibs; i++) {
		struct trace_object *no =
		    array_reserve(t->objs, &t->objs_cap, t->nobjs + 1, sizeof(*no));
		if (!no)
			return -ENOMEM;
		t->objs = no;
		if (symbolizer_open(t->sym, t->libs[i], -1, &f) == 0)
			no[t->nobjs++] = (struct trace_object){f, t->libs[i], NULL};
	}
	return 0;
}

/*
 * Python callers, through the kernel: of Python calls with --stack or
 * --caller, and of every call with --stack where a target is a CPython
 * (or the command runs a python): t->py_stack then. 0 or -ENOMEM.
 */
static int python_callers(struct tracer *t)
{
	const struct tracer_config *c = &t->cfg;
	int py_calls = 0, python = 0;

	/* A pattern that only the name record gives matches: each call's
	 * own frame is read to name it so. */
	t->py_qualified = !c->fast && py_call_wants_qualified(c->patterns, c->npatterns);
	if (c->fast || (!c->want_stack && !c->want_caller && !t->py_qualified))
		return 0;
	for (size_t i = 0; i < t->res.n; i++)
		py_calls |= t->res.fns[i].py == TRACE_PY_ENTRY;
	if (!py_calls && !c->want_stack)
		return 0;
	if (!(t->py_stack = py_stack_new(t->procs)))
		return -ENOMEM;
	for (size_t p = 0; p < c->npids && !python && !py_calls; p++)
		python = py_stack_is_python(t->py_stack, c->pids[p]);
	if (t->program && strncmp(path_base(t->program), "python", 6) == 0)
		python = 1;
	if (!py_calls && !python) {
		py_stack_free(t->py_stack);
		t->py_stack = NULL;
	}
	return 0;
}

int tracer_new(const struct tracer_config *cfg, struct tracer **out)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	*out = t;
	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	t->be = cfg->fast ? &tracer_fast : &tracer_uprobes;
	stack_copy_init(&t->copy, cfg->stack_bytes, cfg->copy_grows && cfg->stack_bytes);
	stack_copy_set_max(&t->copy, UPROBE_MAX_STACK);
	t->child.gate = t->child.status = -1;
	u64map_init(&t->unwound);
	t->sym = symbolizer_new();
	t->procs = t->sym ? procs_new(t->sym) : NULL;
	t->namer = t->procs ? frame_namer_new(t->sym, t->procs) : NULL;
	if (!t->namer)
		return -ENOMEM;
	if ((err = find_objects(t)) < 0)
		return err;
	err = trace_resolve(t->sym, cfg->patterns, cfg->npatterns, t->objs, t->nobjs,
			    cfg->max_probes, &t->res);
	t->resolved = 1;
	if (err)
		return tracer_fail(t, TRACER_RESOLVE, err, cfg->npids ? cfg->pids[0] : 0);

	t->sigs = calloc(t->res.n, sizeof(*t->sigs));
	t->refused = calloc(t->res.n ? t->res.n : 1, sizeof(*t->refused));
	t->hists = cfg->want_hist ? calloc(t->res.n, sizeof(*t->hists)) : NULL;
	trace_calls_init(&t->calls);
	trace_calls_init(&t->py_calls);
	if (!t->sigs || !t->refused || (cfg->want_hist && !t->hists))
		return -ENOMEM;
	size_t probeable = 0;
	for (size_t i = 0; i < t->res.n; i++) {
		const struct trace_fn *fn = &t->res.fns[i];
		t->refused[i] = t->be->refused_entry ? t->be->refused_entry(t, i) : NULL;
		for (size_t p = 0; p < cfg->npids && !t->refused[i]; p++) {
			uint64_t addr;
			if (procs_file_addr(t->procs, cfg->pids[p], fn->file, fn->vaddr, &addr) !=
			    0)
				continue;
			t->refused[i] = trace_code_changed(fn, cfg->pids[p], addr);
			if (!t->refused[i] && t->be->refused_at)
				t->refused[i] = t->be->refused_at(t, i, cfg->pids[p], addr);
		}
		probeable += !t->refused[i];
	}
	if (t->res.n && !probeable)
		return tracer_fail(t, TRACER_REFUSED, -ENOTSUP, cfg->npids ? cfg->pids[0] : 0);
	for (size_t i = 0; i < t->res.n; i++) {
		if (t->res.fns[i].usdt)
			usdt_args_sig(t->res.fns[i].usdt, usdt_spec(t, i), &t->sigs[i]);
		else
			trace_args_describe(t->res.fns[i].file, t->res.fns[i].symbol,
					    t->res.fns[i].vaddr, &t->sigs[i]);
		if (t->hists)
			trace_hist_init(&t->hists[i]);
	}
	if ((err = python_callers(t)) < 0)
		return err;

	return t->be->open ? t->be->open(t) : 0;
}

int tracer_py_frames(const struct tracer *t)
{
	return t->py_stack != NULL;
}

/* The next probe's entry, zeroed but for its function and role; probes
 * are numbered in the order they are added. */
struct probe_of *tracer_push_probe(struct tracer *t, int fn, enum probe_role role)
{
	struct probe_of *v = array_reserve(t->probes, &t->probes_cap, t->nprobes + 1, sizeof(*v));

	if (!v)
		return NULL;
	t->probes = v;
	struct probe_of *p = &t->probes[t->nprobes++];
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->role = (uint8_t)role;
	return p;
}

int tracer_start(struct tracer *t)
{
	return t->be->start(t);
}

/* The name of the return address addr in pid: "function" (with its file
 * and line when known) or "object+0xoffset". */
static void name_caller(struct tracer *t, uint32_t pid, uint64_t addr, struct tracer_frame *f)
{
	struct frame_name fn;

	if (unwind_is_mark(addr)) { /* where and why the walk ended */
		snprintf(f->name, sizeof(f->name), "%s", unwind_mark_name(addr));
		f->file = NULL;
		f->line = 0;
		return;
	}
	frame_namer_user(t->namer, (pid_t)pid, addr, 1, &fn);
	if (fn.kind == FRAME_UNKNOWN && !fn.map) {
		/* A command's mappings appear after recce looked; look again. */
		if (procs_scan(t->procs, (pid_t)pid) == 0 && t->unwinder)
			unwinder_maps_changed(t->unwinder, (pid_t)pid);
		frame_namer_user(t->namer, (pid_t)pid, addr, 1, &fn);
	}
	frame_name_format(&fn, f->name, sizeof(f->name));
	f->file = fn.kind == FRAME_SYMBOL ? fn.frames[0].file : NULL;
	f->line = fn.kind == FRAME_SYMBOL ? fn.frames[0].line : 0;
}

/* name_caller() for py_stack_callers(). */
struct name_ctx {
	struct tracer *t;
	uint32_t pid;
};

static void name_native(void *arg, uint64_t pc, struct tracer_frame *f)
{
	struct name_ctx *c = arg;

	name_caller(c->t, c->pid, pc, f);
}

/* The process whose mappings name a hit's addresses. */
static uint32_t maps_pid(const struct uprobe_hit *h)
{
	return h->maps_pid ? h->maps_pid : h->pid;
}

/*
 * The callers of a call into t->stack, innermost first: unwound from the
 * hit's stack copy where it has one (the frame-pointer chain after it
 * with fp_after, as the sampler's --call-graph auto), else the chain.
 * Returns how many.
 */
static size_t call_stack(struct tracer *t, const struct uprobe_hit *h, int py_call)
{
	uint64_t pcs[TRACER_STACK_FRAMES + 3];
	/* The probed instruction's frame, then its callers'. */
	const uint64_t *frames = h->chain;
	size_t n = h->nchain;

	if (h->stack_len && h->has_regs && !h->maps_pid) {
		if (!t->unwinder)
			t->unwinder = unwinder_new(t->procs, 0);
		/* A command's libraries are mapped after recce first looked at
		 * it: its mappings are read again at its first call unwound. */
		if (!u64map_get(&t->unwound, h->pid, NULL) &&
		    u64map_put(&t->unwound, h->pid, 1) == 0 &&
		    procs_scan(t->procs, (pid_t)h->pid) == 0 && t->unwinder)
			unwinder_maps_changed(t->unwinder, (pid_t)h->pid);
		/* The chain behind the marker the unwinder looks for. */
		uint64_t ips[UPROBE_MAX_CHAIN + 1];
		ips[0] = (uint64_t)PERF_CONTEXT_USER;
		memcpy(ips + 1, h->chain, h->nchain * sizeof(*ips));
		/* The registers in the order of PERF_EVENTS_REGS_MASK: AX BX
		 * CX DX SI DI BP SP IP, then R8 to R15. */
		const uint64_t *g = h->gpr;
		uint64_t regs[17] = {g[X86_RAX], g[X86_RBX], g[X86_RCX], g[X86_RDX], g[X86_RSI],
				     g[X86_RDI], g[X86_RBP], g[X86_RSP], h->ip,	     g[X86_R8],
				     g[X86_R9],	 g[X86_R10], g[X86_R11], g[X86_R12], g[X86_R13],
				     g[X86_R14], g[X86_R15]};
		/* A walk cut short ends with a frame that says why. */
		struct unwind_sample smp = {.pid = (pid_t)h->pid,
					    .tid = (pid_t)h->tid,
					    .ip = h->ip,
					    .ips = ips,
					    .nips = h->nchain + 1,
					    .regs = regs,
					    .stack = h->stack,
					    .stack_len = h->stack_len,
					    .mark_end = 1,
					    .stack_asked = h->stack_asked,
					    .holes = h->stack_holes};
		size_t got = t->unwinder ? unwinder_sample(t->unwinder, &smp, t->cfg.fp_after, 0,
							   TRACER_STACK_FRAMES + 1, pcs,
							   sizeof(pcs) / sizeof(pcs[0]))
					 : 0;
		stack_copy_seen(&t->copy, smp.stack_asked, unwind_cut_at_copy(pcs, got));
		/* pcs[0] is the marker, pcs[1] the probed instruction. */
		if (got >= 2) {
			frames = pcs + 1;
			n = got - 1;
		}
		/* An end in code without CFI is left unmarked: whole stacks end
		 * so too (a stripped Go binary's runtime.goexit). */
		if (n > 1 && frames[n - 1] == UNWIND_MARK_BASE + UNWIND_END_NO_INFO)
			n--;
		if (n > 1 && unwind_is_mark(frames[n - 1]))
			t->stack_ends[frames[n - 1] - UNWIND_MARK_BASE]++;
	}
	if (t->py_stack && h->py_read) {
		struct name_ctx ctx = {t, maps_pid(h)};
		return py_stack_callers(t->py_stack, h, py_call, frames, n, name_native, &ctx,
					t->stack, TRACER_STACK_FRAMES);
	}
	n = n > 0 ? n - 1 : 0;
	if (n > TRACER_STACK_FRAMES)
		n = TRACER_STACK_FRAMES;
	for (size_t i = 0; i < n; i++)
		name_caller(t, maps_pid(h), frames[i + 1], &t->stack[i]);
	return n;
}

/* The process whose memory holds a hit's strings and words, 0 when none
 * may be read. */
static pid_t mem_pid(const struct uprobe_hit *h)
{
	return h->no_memory ? 0 : (pid_t)h->pid;
}

/* The calls in flight of the thread, or goroutine, of a hit in fn. */
static struct call_stack *stack_of(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	int go = t->res.fns[fn].go;

	return trace_calls_stack(&t->calls, h->pid, go, go ? h->gpr[X86_R14] : h->tid);
}

/* The return event of call f, at the time of hit h. */
static void show_return(struct tracer *t, const struct trace_call *f, const struct uprobe_hit *h,
			uint32_t flags)
{
	struct trace_record r;
	int fn = f->fn;

	t->pending--;
	memset(&r, 0, sizeof(r));
	r.kind = TRACE_RETURN;
	r.flags = flags;
	r.time_ns = h->time + t->mono_to_real;
	r.duration_ns = h->time - f->time;
	r.pid = h->pid;
	r.tid = h->tid;
	r.arity = t->sigs[fn].arity;
	if (!flags) {
		r.ret_kind = (uint8_t)(t->sigs[fn].known ? t->sigs[fn].ret_kind : TRACE_ARG_HEX);
		r.ret = trace_args_narrow_ret(&t->sigs[fn], h->ret);
		if (r.ret_kind == TRACE_ARG_OBJECT && h->object)
			trace_args_format_object(&t->sigs[fn].ret_object, h->object, h->object_len,
						 h->string, h->string_len, r.ret_text,
						 sizeof(r.ret_text));
		if (trace_args_results_text(&t->sigs[fn]) && h->has_regs) {
			/* Go: every result, from the registers at the return. */
			uint32_t have =
			    t->be->sysv_args_only ? arg_sysv_mask() | 1u << X86_RAX : ~0u;
			r.ret_kind = TRACE_ARG_RESULTS;
			/* A string result, as the probe copied it at the return. */
			struct trace_copied_str copy = {h->object, h->object_len};
			trace_args_format_results(&t->sigs[fn], h->gpr, have, mem_pid(h), &copy,
						  r.ret_text, sizeof(r.ret_text));
		}
	}
	r.nargs = f->nargs;
	memcpy(r.args, f->args, sizeof(r.args));
	memcpy(r.regs, f->regs, sizeof(r.regs));
	if (f->function[0]) {
		/* A Python call: its value is not seen. */
		memcpy(r.function, f->function, sizeof(r.function));
		r.arity = -1;
		r.ret_kind = TRACE_ARG_NONE;
	} else {
		snprintf(r.function, sizeof(r.function), "%s:%s", t->res.fns[fn].object,
			 t->res.fns[fn].name);
	}
	t->sunk++;
	t->cfg.sink(t->cfg.sink_arg, &r, NULL, 0);
	if (t->hists && !flags && f->function[0])
		py_hists_add(&t->py_hists, f->function, r.duration_ns);
	else if (t->hists && !flags)
		trace_hist_add(&t->hists[fn], r.duration_ns);
}

/* Events lost so far: with links, the BPF program's own count, which
 * grows the moment a hit is dropped; else what the kernel has reported,
 * which comes later. */
static uint64_t lost_now(const struct tracer *t)
{
	return t->be->lost(t);
}

/* ... when hit h was written (with links, carried by the hit itself). */
static uint64_t lost_at(const struct tracer *t, const struct uprobe_hit *h)
{
	return t->be->lost_at ? t->be->lost_at(t, h) : lost_now(t);
}

/* The losses a call of st is paired by, at its entry h or at the hit h
 * that ends it: a loss between the two must show. Where the backend
 * knows them within bounds per thread (--fast, a ring each), the lower
 * at the entry; a goroutine moves between threads, whose bounds do not
 * compare: for it all losses, now. */
static uint64_t call_lost(const struct tracer *t, const struct call_stack *st,
			  const struct uprobe_hit *h, int entry)
{
	if (!t->be->lost_before)
		return lost_at(t, h);
	if (st->go)
		return lost_now(t);
	return entry ? t->be->lost_before(t, h) : lost_at(t, h);
}

/* Until when a thread ran unwatched (tracer_backend.blind). */
static uint64_t blind_now(const struct tracer *t)
{
	return t->be->blind ? t->be->blind(t) : 0;
}

/* How call f of st ended, unseen: lost if events were dropped since it
 * began (its return may be among them) or, for a goroutine, if a thread
 * ran unwatched after it began (it may have returned there); else
 * unwound. */
static unsigned unseen_end(struct tracer *t, const struct call_stack *st,
			   const struct trace_call *f, uint64_t lost)
{
	if (lost > f->lost)
		return TRACE_RECORD_LOST;
	if (st->go && blind_now(t) > f->time) {
		t->returns_unseen++;
		return TRACE_RECORD_LOST;
	}
	return TRACE_RECORD_UNWOUND;
}

/* Shows a call that ended unseen, as how (unwound, lost...), unless it
 * last hit an exit jump whose target could not be read: nothing after it
 * says otherwise, so it left by that jump, then. */
static void show_end(struct tracer *t, const struct trace_call *f, const struct uprobe_hit *h,
		     unsigned how)
{
	if (!f->left_at) {
		show_return(t, f, h, how);
		return;
	}
	struct uprobe_hit at = *h;
	at.time = f->left_at;
	show_return(t, f, &at, TRACE_RECORD_TAIL);
}

/* Ends the calls of st above depth d: an exception, a longjmp or a stack
 * switch left them without a return; or, when events were dropped since
 * the call, their return may be among them. */
static void unwind_to(struct tracer *t, struct call_stack *st, int d, const struct uprobe_hit *h)
{
	if (st->depth <= d)
		return;
	uint64_t lost = call_lost(t, st, h, 0);

	while (st->depth > d) {
		const struct trace_call *f = &st->calls[--st->depth];
		unsigned how = unseen_end(t, st, f, lost);
		if (f->selected)
			show_end(t, f, h, how);
		if (how == TRACE_RECORD_LOST)
			for (int k = 0; k < st->depth; k++)
				st->calls[k].doubtful = 1;
	}
}

/* The Python calls in flight on the thread of hit h. */
static struct call_stack *py_stack_of(struct tracer *t, const struct uprobe_hit *h)
{
	return trace_calls_stack(&t->py_calls, h->pid, 0, h->tid);
}

/* The Python calls not shown that run above the innermost shown one of
 * st (above none: st->unshown), each a count: the entries and returns of
 * a thread's Python calls nest exactly, so a return ends one of them
 * while there are any, and only then a shown call. */
static int *py_unshown(struct call_stack *st)
{
	return st->depth ? &st->calls[st->depth - 1].unshown : &st->unshown;
}

/* A Python call's name that no pattern named: kept among the first
 * few, to show what the names look like when none is named. */
static void py_other(struct tracer *t, const char *name)
{
	if (t->py_named || t->npy_others == TRACER_PY_OTHERS)
		return;
	for (size_t i = 0; i < t->npy_others; i++)
		if (strncmp(t->py_others[i], name, sizeof(t->py_others[i]) - 1) == 0)
			return;
	snprintf(t->py_others[t->npy_others++], sizeof(t->py_others[0]), "%s", name);
}

/* The record of a call at hit h of fn, its function and arguments;
 * whether a pattern names it (a Python call's name is matched now). */
static int call_record(struct tracer *t, const struct uprobe_hit *h, int fn,
		       struct trace_record *r)
{
	const struct tracer_config *c = &t->cfg;
	const struct trace_fn *f = &t->res.fns[fn];
	uint32_t have = t->be->sysv_args_only ? arg_sysv_mask() : (1u << X86_NGPR) - 1;

	memset(r, 0, sizeof(*r));
	r->kind = TRACE_CALL;
	r->time_ns = h->time + t->mono_to_real;
	r->pid = h->pid;
	r->tid = h->tid;
	if (f->py) {
		struct py_call_strings strs = {(const char *)h->object, (const char *)h->string,
					       h->object_len, h->string_len, NULL};
		char qualified[128];
		if (t->py_qualified && t->py_stack &&
		    py_stack_own(t->py_stack, h, qualified, sizeof(qualified)))
			strs.qualified = qualified;
		t->py_unqualified += t->py_qualified && !strs.qualified;
		int rc = py_call_fill(f->usdt, h->gpr, &strs, mem_pid(h), c->patterns,
				      c->npatterns, r);
		t->py_unnamed += rc < 0;
		t->py_named += rc > 0;
		if (rc == 0)
			py_other(t, r->function);
		return rc > 0;
	}
	snprintf(r->function, sizeof(r->function), "%s:%s", f->object, f->name);
	if (f->usdt) {
		struct usdt_copy plan;
		struct usdt_copied got = {h->object, h->object_len, {NULL, NULL}};
		usdt_args_copy(f->usdt, usdt_spec(t, (size_t)fn), &plan);
		if (plan.str[0] >= 0) {
			got.obj = NULL;
			got.str[0] = (const char *)h->object;
			got.str[1] = (const char *)h->string;
		}
		usdt_args_fill(f->usdt, usdt_spec(t, (size_t)fn), &plan, &got, h->gpr,
			       h->has_regs ? have : 0, mem_pid(h), r);
		return 1;
	}
	/* The strings the probe copied at the call (tracer-uprobes.c asks
	 * for those of trace_args_str_plan()). */
	struct trace_copied_args copy = {{h->object, h->string}, {h->object_len, 0}};
	copy.len[1] = (size_t)h->string_len;
	trace_args_fill(&t->sigs[fn], h->gpr, have, mem_pid(h), &copy, c->want_args || c->cond, r);
	if (!c->want_args && !t->sigs[fn].known)
		r->nargs = 0; /* registers were only filled for --if */
	return 1;
}

static int on_call(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	const struct tracer_config *c = &t->cfg;
	const struct trace_fn *tf = &t->res.fns[fn];
	struct trace_record r;
	/* Calls pair with returns: a function's with --return, a Python
	 * call's by its name's address, a USDT probe's never. */
	int pairs = c->want_return && (!tf->usdt || tf->py);
	struct call_stack *st = !pairs ? NULL : tf->py ? py_stack_of(t, h) : stack_of(t, h, fn);

	/* Calls this one proves over are shown ended before it begins. */
	if (st && !st->go && !tf->py)
		unwind_to(t, st, trace_calls_live_depth(st, h->sp, 1), h);
	/* Every 256 calls, the breaker's look at what the target made, the
	 * calls lost included: a flood recce reads too slowly to see whole
	 * (a busy machine, a sanitized build) is still one. A lost record is
	 * a call, or with --return a call's half. */
	if (!(++t->calls_seen & 255) &&
	    trace_limits_flood(&t->limits, time_now_ns(CLOCK_MONOTONIC), t->calls_seen,
			       lost_now(t) / (c->want_return ? 2 : 1)) == TRACE_STOP_BREAKER)
		return 1;
	/* A process met first: its Python frames from its next calls on. */
	if (t->py_stack && h->py_read)
		py_stack_watch(t->py_stack, t->up, (pid_t)h->pid);
	/* Every Python call traps, shown or not: the breaker counts them all. */
	if (tf->py) {
		t->py_seen++;
		if (trace_limits_seen(&t->limits, h->time) == TRACE_STOP_BREAKER)
			return 1;
	}
	int selected = call_record(t, h, fn, &r);
	selected = selected && !t->draining && trace_cond_eval(c->cond, trace_record_lookup, &r);
	if (selected) {
		enum trace_stop stop = tf->py ? trace_limits_shown(&t->limits)
					      : trace_limits_event(&t->limits, h->time);
		if (stop == TRACE_STOP_BREAKER)
			return 1;
		size_t nstack = 0;
		/* Its process's interpreter not read yet (a command's first
		 * calls), or its thread's state not found. */
		t->py_no_frames += tf->py && t->py_stack && h->py_read && !h->npy &&
				   (c->want_stack || c->want_caller);
		if (c->want_caller && t->py_stack && h->py_read) {
			if (!py_stack_caller(t->py_stack, h, r.caller, sizeof(r.caller)))
				r.caller[0] = 0;
		} else if (c->want_caller && h->nchain > 1) {
			struct tracer_frame caller;
			name_caller(t, maps_pid(h), h->chain[1], &caller);
			snprintf(r.caller, sizeof(r.caller), "%.*s", (int)sizeof(r.caller) - 1,
				 caller.name);
		}
		if (c->want_stack)
			nstack = call_stack(t, h, tf->py != 0);
		t->sunk++;
		c->sink(c->sink_arg, &r, t->stack, nstack);
		t->shown++;
		if (stop == TRACE_STOP_COUNT) {
			t->draining = 1;
			t->lost_at_count = lost_at(t, h);
		}
	}
	if (pairs) {
		/* A Python call not shown is only counted: its end is the
		 * next return while the count is above zero. */
		if (!st || st->depth >= TRACE_CALLS_DEPTH || (tf->py && !selected)) {
			t->dropped += tf->py ? selected : 1;
			if (st && tf->py)
				(*py_unshown(st))++;
		} else {
			struct trace_call *f = &st->calls[st->depth++];
			f->fn = fn;
			f->selected = selected;
			f->time = h->time;
			f->sp = tf->py ? py_call_key(tf->usdt, h->gpr) : h->sp;
			if (tf->py)
				memcpy(f->function, r.function, sizeof(f->function));
			else
				f->function[0] = 0;
			f->lost = call_lost(t, st, h, 1);
			f->left_at = 0;
			f->unshown = 0;
			f->doubtful = 0;
			f->nargs = r.nargs;
			memcpy(f->args, r.args, sizeof(f->args));
			memcpy(f->regs, r.regs, sizeof(f->regs));
			if (selected)
				t->pending++;
		}
	}
	/* Without returns a shown call is the whole event. */
	return t->draining && !t->pending;
}

/* A return of fn, seen with the return address at sp. */
static int on_return(struct tracer *t, const struct uprobe_hit *h, int fn, uint64_t sp, int tail)
{
	struct call_stack *st = stack_of(t, h, fn);
	int d;

	if (!st)
		return 0;
	if (st->go) {
		/* A goroutine's stack moves when it grows: match by order. */
		for (d = st->depth - 1; d >= 0 && st->calls[d].fn != fn; d--)
			;
		if (d < 0)
			return 0; /* called before the probes were in place */
		unwind_to(t, st, d + 1, h);
	} else {
		unwind_to(t, st, trace_calls_live_depth(st, sp, 0), h);
		d = st->depth - 1;
		if (d < 0 || st->calls[d].sp != sp || st->calls[d].fn != fn)
			return 0; /* called before the probes were in place */
	}
	st->depth = d;
	/* Events lost since the call: this return may be a later call's,
	 * whose entry was among them. */
	if (call_lost(t, st, h, 0) > st->calls[d].lost)
		st->calls[d].doubtful = 1;
	if (st->calls[d].selected)
		show_return(t, &st->calls[d], h,
			    st->calls[d].doubtful ? TRACE_RECORD_LOST
			    : tail		  ? TRACE_RECORD_TAIL
						  : 0);
	return t->draining && !t->pending;
}

/* A Python function's return (or yield), at hit h of fn: it ends the
 * innermost call of the same function name on its thread, and the calls
 * above it, which left unseen. */
static int on_py_return(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	struct call_stack *st = py_stack_of(t, h);
	uint64_t key = py_call_key(t->res.fns[fn].usdt, h->gpr);
	int d;

	if (!st)
		return 0;
	if (*py_unshown(st)) {
		(*py_unshown(st))--; /* the end of a call not shown */
		return 0;
	}
	/* The innermost shown call, unless events were lost: then the
	 * innermost of its function, the others ended unseen. */
	for (d = st->depth - 1; d >= 0 && st->calls[d].sp != key; d--)
		;
	if (d < 0)
		return 0; /* called before the probes were in place */
	unwind_to(t, st, d + 1, h);
	st->depth = d;
	if (st->calls[d].selected)
		show_return(t, &st->calls[d], h, 0);
	return t->draining && !t->pending;
}

/* Reads 8 bytes of a stopped thread's process, for an indirect jump. */
static int read_target(void *arg, uint64_t addr, uint64_t *val)
{
	const struct uprobe_hit *h = arg;

	return trace_read_word(mem_pid(h), addr, val);
}

/* Whether the exit probe p, hit, is the function leaving this time. */
static int exit_taken(const struct tracer *t, const struct uprobe_hit *h, const struct probe_of *p)
{
	return func_exit_taken(&p->how, t->res.fns[p->fn].size, h->ip, h->gpr, h->flags,
			       read_target, (void *)(uintptr_t)h);
}

/* An indirect jump out of fn whose target could not be read (the process
 * ended before recce read the hit): the call it belongs to remembers it. */
static void exit_undecided(struct tracer *t, const struct uprobe_hit *h, int fn)
{
	struct call_stack *st = stack_of(t, h, fn);

	if (!st || st->go || !st->depth)
		return;
	struct trace_call *f = &st->calls[st->depth - 1];
	if (f->fn == fn && f->sp == h->sp)
		f->left_at = h->time;
}

static int on_hit(const struct uprobe_hit *h, void *arg)
{
	struct tracer *t = arg;
	const struct probe_of *p = &t->probes[h->probe];

	if (t->limits.stop == TRACE_STOP_BREAKER || t->limits.stop == TRACE_STOP_OUTPUT)
		return 1;
	switch (p->role) {
	case PROBE_EXIT: {
		int taken = exit_taken(t, h, p);
		if (taken < 0)
			exit_undecided(t, h, p->fn);
		if (taken <= 0)
			return 0; /* a jump that stays, or falls through */
		return on_return(t, h, p->fn, h->sp, p->how.kind != FUNC_EXIT_RET);
	}
	case PROBE_URETPROBE:
		/* The return address is popped already. */
		return on_return(t, h, p->fn, h->sp - 8, 0);
	default:
		if (t->res.fns[p->fn].py == TRACE_PY_TRACING)
			return 0; /* another tool raised its site's semaphore */
		if (t->res.fns[p->fn].py == TRACE_PY_RETURN)
			return t->cfg.want_return ? on_py_return(t, h, p->fn) : 0;
		return on_call(t, h, p->fn);
	}
}

/* --stack: the copy grows when the calls read ask for it (stack-copy.h):
 * the program copies more from the next call on. A refusal (no BPF
 * program) keeps it as it is. */
static void grow_copy(struct tracer *t)
{
	uint32_t want =
	    t->copy.grows && t->up
		? stack_copy_wants(&t->copy, t->unwinder ? unwinder_copy_wanted(t->unwinder) : 0)
		: 0;

	if (want && uprobe_set_stack_copy(t->up, want) == 0)
		stack_copy_grown(&t->copy, want);
	else if (want)
		t->copy.grows = 0;
}

/* The hits since the last read, of whichever probes there are. */
static int read_hits(struct tracer *t)
{
	int n = t->be->read(t, on_hit);

	grow_copy(t);
	return n;
}

/* Every call still in flight when the trace ends gets its end: lost if
 * its thread's own events were dropped since it began (where the backend
 * knows them: its return may be among them), else still running, if its
 * thread (or, for a goroutine, its process) is there, else lost if events
 * were dropped since, else unwound (the thread or process ended inside
 * it, an exception its last call threw included). No call is left
 * without one. */
static void close_open_calls(struct tracer *t)
{
	uint64_t now = time_now_ns(CLOCK_MONOTONIC), lost = lost_now(t);
	struct procstat_reader r;
	int can_read = procstat_reader_init(&r, NULL) == 0;

	for (size_t i = 0; i < t->calls.n + t->py_calls.n; i++) {
		struct call_stack *st = i < t->calls.n ? &t->calls.stacks[i]
						       : &t->py_calls.stacks[i - t->calls.n];
		if (!st->depth)
			continue;
		struct uprobe_hit h;
		memset(&h, 0, sizeof(h));
		h.time = now;
		h.pid = st->pid;
		h.tid = st->go ? st->pid : (uint32_t)st->id;
		/* A goroutine may be on any thread: its process decides. */
		struct procstat_task task;
		pid_t tid = st->go ? (pid_t)st->pid : (pid_t)st->id;
		int alive = can_read && procstat_read_task(&r, (pid_t)st->pid, tid, &task) == 0 &&
			    task.state != 'Z' && task.state != 'X';
		uint64_t own = lost;
		int known = !st->go && t->be->lost_thread &&
			    t->be->lost_thread(t, (uint32_t)st->id, &own) == 0;
		while (st->depth > 0) {
			const struct trace_call *f = &st->calls[--st->depth];
			if (f->selected && alive && !(known && own > f->lost))
				show_return(t, f, &h, TRACE_RECORD_OPEN);
			else if (f->selected)
				show_end(t, f, &h, unseen_end(t, st, f, own));
		}
	}
	if (can_read)
		procstat_reader_release(&r);
}

/* Every probe out of the targets. */
static int remove_probes(struct tracer *t)
{
	return t->be->remove(t);
}

static void on_stop_signal(void *arg, int fd, short revents)
{
	struct tracer *t = arg;
	char buf[128]; /* one struct signalfd_siginfo */

	(void)revents;
	while (read(fd, buf, sizeof(buf)) > 0)
		trace_limits_stop(&t->limits, TRACE_STOP_SIGNAL);
}

static void on_target_exit(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct tracer *)arg)->alive--;
}

/* Tracing is over: nothing of the tracer's is waited on any more. */
static void leave(struct tracer *t)
{
	evloop_leave(&t->seat, t, 1);
}

/* Whether a limit, a person or an exit ends the trace: after the count,
 * it waits for the returns of the calls shown, but no longer than the
 * time limit. */
static int over(struct tracer *t)
{
	uint64_t left = trace_limits_remaining(&t->limits, time_now_ns(CLOCK_MONOTONIC));

	return t->limits.stop && !(t->limits.stop == TRACE_STOP_COUNT && t->pending && left);
}

/* After every wake of the loop: take the hits, then see whether a limit
 * fired, a person stopped it, or every target has exited. */
static void on_wake(void *arg)
{
	struct tracer *t = arg;

	if (read_hits(t) < 0) {
		leave(t);
		return;
	}
	/* Caught up: the sink may write out what it holds. */
	if (t->sunk != t->sunk_told) {
		t->sunk_told = t->sunk;
		t->cfg.sink(t->cfg.sink_arg, NULL, NULL, 0);
	}
	if (t->limits.stop == TRACE_STOP_BREAKER || t->limits.stop == TRACE_STOP_OUTPUT ||
	    (t->draining && !t->pending)) {
		leave(t);
		return;
	}
	if (t->child.pid && !t->child_done &&
	    waitpid(t->child.pid, &t->child_status, WNOHANG) == t->child.pid)
		t->child_done = 1;
	if (!t->alive || t->child_done) {
		/* Read what the target did before it exited. */
		read_hits(t);
		trace_limits_stop(&t->limits, TRACE_STOP_EXITED);
	}
	trace_limits_tick(&t->limits, time_now_ns(CLOCK_MONOTONIC));
	if (over(t))
		leave(t);
}

int tracer_attach(struct tracer *t, struct evloop *loop, void (*done)(void *arg), void *arg)
{
	size_t nrings = t->be->wake_fds ? t->be->wake_fds(t, NULL, 0) : 0;
	int *ringfds = calloc(nrings ? nrings : 1, sizeof(*ringfds));
	int err = ringfds ? 0 : -ENOMEM;

	evloop_seat_take(&t->seat, loop, done, arg);
	t->alive = 0;
	if (!err && nrings) {
		t->be->wake_fds(t, ringfds, nrings);
		for (size_t i = 0; i < nrings && !err; i++)
			err = evloop_add(loop, ringfds[i], 0, NULL, t);
	}
	free(ringfds);
	if (!err)
		err = evloop_add(loop, t->cfg.stop_fd, 0, on_stop_signal, t);
	for (size_t i = 0; i < t->ntargets && !err; i++) {
		int fd = proc_pidfd_open(t->targets[i]);
		t->alive += fd >= 0;
		err = evloop_add(loop, fd, EVLOOP_ONCE | EVLOOP_CLOSE, on_target_exit, t);
	}
	/* A first look at once; then one every poll interval (the fast rings
	 * wake nobody: they are read every few milliseconds); and one when the
	 * time limit is up. */
	int64_t now = time_now_ns(CLOCK_MONOTONIC);
	int64_t every = t->be->poll_ms * 1000000LL;
	int id = err ? err : evloop_timer_add(loop, now, 0, NULL, t);
	if (id >= 0)
		id = evloop_timer_add(loop, now + every, every, NULL, t);
	if (id >= 0 && t->limits.time_ns)
		id = evloop_timer_add(loop, (int64_t)(t->limits.start_ns + t->limits.time_ns), 0,
				      NULL, t);
	err = id < 0 ? id : 0;
	if (!err)
		err = evloop_check_add(loop, on_wake, t);
	if (err)
		evloop_leave(&t->seat, t, 0);
	return err;
}

int tracer_finish(struct tracer *t)
{
	/* Stopped by the loop's owner: as a person would. */
	if (evloop_seated(&t->seat)) {
		trace_limits_stop(&t->limits, TRACE_STOP_SIGNAL);
		evloop_leave(&t->seat, t, 0);
	}
	/* The target first: remove every probe before anything else. */
	int err = remove_probes(t);
	/* --fast: the calls made up to the removal, still in the rings. */
	if (t->be->read_after_remove)
		read_hits(t);
	close_open_calls(t);
	return err;
}

int tracer_run(struct tracer *t)
{
	struct evloop loop;

	evloop_init(&loop);
	int err = tracer_attach(t, &loop, evloop_stop_done, &loop);
	if (!err)
		err = evloop_run(&loop);
	int rerr = tracer_finish(t);
	evloop_release(&loop);
	return err ? err : rerr;
}

void tracer_stop(struct tracer *t, enum trace_stop why)
{
	trace_limits_stop(&t->limits, why);
}

int tracer_wait_child(struct tracer *t)
{
	if (!t->cfg.argv || !t->child.pid)
		return -1;
	if (!t->child_done)
		waitpid(t->child.pid, &t->child_status, 0);
	t->child_done = 1;
	return t->child_status;
}

const char *tracer_refused(const struct tracer *t, size_t i)
{
	return t->refused && i < t->res.n ? t->refused[i] : NULL;
}

int tracer_failed_code(const struct tracer *t, size_t *offset)
{
	if (offset)
		*offset = t->failed_offset;
	return t->failed_fn;
}

enum tracer_step tracer_failure(const struct tracer *t, pid_t *pid, const char **path)
{
	if (pid)
		*pid = t->failed_pid;
	if (path)
		*path = t->failed_path;
	return t->failed;
}

const struct trace_resolved *tracer_functions(const struct tracer *t)
{
	return &t->res;
}

const struct fast_set_info *tracer_fast_info(const struct tracer *t)
{
	return &t->fast_info;
}

const struct trace_sig *tracer_signature(const struct tracer *t, size_t i)
{
	return &t->sigs[i];
}

struct trace_hist *tracer_py_hist(struct tracer *t, size_t i, const char **name)
{
	return py_hists_get(&t->py_hists, i, name);
}

uint64_t tracer_py_hists_dropped(const struct tracer *t)
{
	return t->py_hists.dropped;
}

struct trace_hist *tracer_hist(struct tracer *t, size_t i)
{
	return t->hists ? &t->hists[i] : NULL;
}

void tracer_get_stats(const struct tracer *t, struct tracer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->stop = t->limits.stop;
	st->shown = t->shown;
	st->dropped = t->dropped;
	st->returns_unseen = t->returns_unseen;
	st->fork_outsider = t->fork_outsider;
	st->fork_outsider_comm = t->fork_outsider_comm;
	st->fork_outsider_file = t->fork_outsider_file;
	st->fork_err = t->fork_err;
	t->be->stats(t, st);
	/* Dropped after the last call --count asked for was written: none
	 * of them was wanted (but a shown call's return, which says so). */
	if (t->draining && st->lost > t->lost_at_count)
		st->lost_after_count = st->lost - t->lost_at_count;
	st->ntargets = t->ntargets;
	st->first = t->ntargets ? t->targets[0] : (t->cfg.npids ? t->cfg.pids[0] : 0);
	st->methods = t->methods;
	st->py_seen = t->py_seen;
	st->py_unnamed = t->py_unnamed;
	st->py_named = t->py_named;
	st->py_unqualified = t->py_unqualified;
	memcpy(st->py_others, t->py_others, sizeof(st->py_others));
	st->npy_others = t->npy_others;
	if (t->py_stack)
		py_stack_get_stats(t->py_stack, &st->py_frames_unread, &st->py_frames_off);
	st->py_no_frames = t->py_no_frames;
	memcpy(st->stack_ends, t->stack_ends, sizeof(st->stack_ends));
	st->copy_wanted = t->unwinder ? unwinder_copy_wanted(t->unwinder) : 0;
	st->copy_bytes = t->copy.now;
	st->copy_cut = t->copy.cut;
	stack_copy_grew(&t->copy, &st->copy_before, &st->copy_cut_before);
	for (size_t i = 0; i < t->res.n; i++) {
		const struct trace_fn *f = &t->res.fns[i];
		if (tracer_refused(t, i))
			continue;
		if (f->py)
			st->pythons += f->py == TRACE_PY_ENTRY;
		else if (f->usdt)
			st->usdt_probes++;
		else
			st->functions++;
	}
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	t->be->release(t);
	if (t->child.gate >= 0)
		launch_cancel(&t->child);
	trace_calls_release(&t->calls);
	trace_calls_release(&t->py_calls);
	py_hists_release(&t->py_hists);
	free(t->probes);
	free(t->sigs);
	free(t->refused);
	free(t->hists);
	if (t->resolved)
		trace_resolved_release(&t->res, t->cfg.npatterns);
	free(t->objs);
	for (size_t i = 0; i < t->nlibs; i++)
		free(t->libs[i]);
	free(t->libs);
	free(t->program);
	frame_namer_free(t->namer);
	py_stack_free(t->py_stack);
	u64map_release(&t->unwound);
	unwinder_free(t->unwinder);
	procs_free(t->procs);
	symbolizer_free(t->sym);
	free(t);
}
