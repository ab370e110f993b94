/*
 * libuv's callbacks as tasks, by probes on its indirect calls (see
 * uv-tasks.h).
 */
#include "trace/uv-tasks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/ring-format.h"
#include "perf/uprobe.h"
#include "proc/frame-name.h"
#include "proc/proc-maps.h"
#include "proc/tasks.h"
#include "symbols/indirect-calls.h"
#include "symbols/symbolize.h"
#include "trace/trace-limits.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/path.h"
#include "util/strpool.h"
#include "util/u64map.h"

#define MAX_DEPTH 32 /* callbacks nested on one thread */

/* A callback running on a thread: the stack pointer at its call. */
struct running {
	uint64_t sp, id;
};

struct thread_calls {
	int32_t tid;
	size_t depth;
	struct running r[MAX_DEPTH];
};

struct uv_tasks {
	pid_t pid;
	char library[4096];
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct frame_namer *namer;
	struct uprobe_set *probes;
	struct indirect_call *sites;
	size_t nsites;
	uint32_t *probe_of; /* per probe: its site << 1, | 1 at the site's return */
	size_t nprobes, cap_probes;
	struct strpool names;
	struct u64map name_of;	/* callback address -> interned name, or 1: not a callback */
	struct thread_calls *threads;
	size_t nthreads, cap_threads;
	uint64_t next_id, callbacks;
	struct trace_limits limits; /* the circuit breaker, rate only */
	int tripped;		    /* it tripped: every probe removed */
	/* Where the records of a drain go. */
	struct ring_event **ev;
	size_t *n, *cap;
	int err;
};

/* libuv's own code and the libraries under it: a call there is plumbing. */
static int plumbing(const char *path)
{
	const char *b = path_base(path);

	return strncmp(b, "libuv.so", 8) == 0 || strncmp(b, "libc.so", 7) == 0 ||
	       strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "libpthread", 10) == 0 ||
	       path[0] == '[';
}

/* The task type of a call to addr: its function's name, NULL for no
 * callback. */
static const char *callback_name(struct uv_tasks *u, uint64_t addr)
{
	uint64_t v;

	if (u64map_get(&u->name_of, addr, &v))
		return v == 1 ? NULL : (const char *)(uintptr_t)v;
	const struct proc_map *m = procs_find(u->procs, u->pid, addr);
	if (!m) {
		procs_scan(u->procs, u->pid); /* a library loaded since */
		m = procs_find(u->procs, u->pid, addr);
	}
	const char *name = NULL;
	if (m && !plumbing(m->path)) {
		struct frame_name fn;
		char buf[600];
		frame_namer_user(u->namer, u->pid, addr, 0, &fn);
		if (fn.kind == FRAME_SYMBOL && fn.nframes > 0)
			snprintf(buf, sizeof(buf), "%s", fn.frames[fn.nframes - 1].function);
		else
			snprintf(buf, sizeof(buf), "%s+0x%llx", path_base(m->path),
				 (unsigned long long)fn.offset);
		/* libuv linked into the program: its own functions by name. */
		if (strncmp(buf, "uv_", 3) != 0)
			name = strpool_intern(&u->names, buf);
	}
	/* Remembered either way: a miss costs a read of the maps once. */
	if (u64map_put(&u->name_of, addr, name ? (uintptr_t)name : 1) != 0)
		u->err = -ENOMEM;
	return name;
}

static struct thread_calls *thread_of(struct uv_tasks *u, int32_t tid)
{
	for (size_t i = 0; i < u->nthreads; i++)
		if (u->threads[i].tid == tid)
			return &u->threads[i];
	struct thread_calls *t =
	    array_reserve(u->threads, &u->cap_threads, u->nthreads + 1, sizeof(*t));
	if (!t)
		return NULL;
	u->threads = t;
	t = &u->threads[u->nthreads++];
	t->tid = tid;
	t->depth = 0;
	return t;
}

static void emit(struct uv_tasks *u, uint16_t kind, const struct uprobe_hit *h, const char *name,
		 uint64_t id, uint64_t parent)
{
	struct ring_event *e = array_reserve(*u->ev, u->cap, *u->n + 1, sizeof(**u->ev));

	if (!e) {
		u->err = -ENOMEM;
		return;
	}
	*u->ev = e;
	e[*u->n] = (struct ring_event){.time_ns = h->time,
				       .tid = (int32_t)h->tid,
				       .kind = kind,
				       .name = name,
				       .value = (int64_t)id,
				       .extra = parent};
	(*u->n)++;
}

/* A callback's end: stopped and finished. */
static void ends(struct uv_tasks *u, const struct uprobe_hit *h, uint64_t id)
{
	emit(u, RECCE_EV_TASK_STOP, h, NULL, id, 0);
	emit(u, RECCE_EV_TASK_FINISH, h, NULL, id, 0);
}

static int on_hit(const struct uprobe_hit *h, void *arg)
{
	struct uv_tasks *u = arg;
	size_t site = h->probe >= 0 && (size_t)h->probe < u->nprobes
			  ? u->probe_of[h->probe] >> 1
			  : u->nsites;
	int at_return = site < u->nsites && (u->probe_of[h->probe] & 1);
	struct thread_calls *t = thread_of(u, (int32_t)h->tid);

	if (!t || site >= u->nsites) {
		if (!t)
			u->err = -ENOMEM;
		return u->err;
	}
	if (at_return) {
		/* Callbacks left by a longjmp end here too; a return of a
		 * call that was no callback matches nothing. */
		while (t->depth && t->r[t->depth - 1].sp < h->sp)
			ends(u, h, t->r[--t->depth].id);
		if (t->depth && t->r[t->depth - 1].sp == h->sp)
			ends(u, h, t->r[--t->depth].id);
		return u->err;
	}
	const struct indirect_call *c = &u->sites[site];
	uint64_t target = c->mem ? (h->object && h->object_len >= 8
					? *(const uint64_t *)(const void *)h->object
					: 0)
				 : h->gpr[c->reg];
	const char *name = target ? callback_name(u, target) : NULL;
	if (!name || t->depth == MAX_DEPTH || u->tripped)
		return u->err;
	if (trace_limits_event(&u->limits, h->time) == TRACE_STOP_BREAKER) {
		/* Too many to follow without hurting the program: the probes
		 * go at once. Returns already in the rings still end their
		 * runs; a callback still running then is left open. */
		uprobe_set_remove_all(u->probes);
		u->tripped = 1;
		return u->err;
	}
	uint64_t id = ++u->next_id, parent = t->depth ? t->r[t->depth - 1].id : 0;
	/* A tail call's callback returns to the caller's caller, popping the
	 * return address at sp: it ends where the outer call's return site
	 * sees sp + 8. */
	t->r[t->depth++] = (struct running){c->tail ? h->sp + 8 : h->sp, id};
	u->callbacks++;
	emit(u, RECCE_EV_TASK_CREATE, h, name, id, parent);
	emit(u, RECCE_EV_TASK_START, h, NULL, id, 0);
	return u->err;
}

int uv_tasks_drain(struct uv_tasks *u, struct ring_event **ev, size_t *n, size_t *cap)
{
	u->ev = ev;
	u->n = n;
	u->cap = cap;
	u->err = 0;
	int r = uprobe_set_read(u->probes, on_hit, u);
	return u->err ? u->err : r < 0 ? r : 0;
}

struct uv_ranges {
	struct sym_file *file;
	struct code_range *r;
	size_t n, cap;
	int err;
};

static int add_uv_function(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct uv_ranges *g = ctx;
	uint64_t off;

	if (strncmp(name, "uv_", 3) != 0 || !size ||
	    sym_file_vaddr_to_offset(g->file, vaddr, &off) != 0)
		return 0;
	struct code_range *v = array_reserve(g->r, &g->cap, g->n + 1, sizeof(*v));
	if (!v) {
		g->err = -ENOMEM;
		return 1;
	}
	g->r = v;
	v[g->n++] = (struct code_range){off, size};
	return 0;
}

static int by_offset(const void *a, const void *b)
{
	const struct indirect_call *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The indirect calls of the functions named uv_* of f, each once (a
 * function with two names is swept twice). */
static int embedded_sites(struct uv_tasks *u, struct sym_file *f)
{
	struct uv_ranges g = {.file = f};

	symbolizer_foreach_function(u->sym, f, add_uv_function, &g);
	int err = g.err ? g.err
			: indirect_calls_find_in(sym_file_fd(f), g.r, g.n, &u->sites, &u->nsites);
	free(g.r);
	if (err || !u->nsites)
		return err;
	qsort(u->sites, u->nsites, sizeof(*u->sites), by_offset);
	size_t kept = 1;
	for (size_t i = 1; i < u->nsites; i++)
		if (u->sites[i].offset != u->sites[kept - 1].offset)
			u->sites[kept++] = u->sites[i];
	u->nsites = kept;
	return 0;
}

/* Remembers that probe index p is site's call, or its return. */
static int note_probe(struct uv_tasks *u, int p, size_t site, int ret)
{
	if (p < 0)
		return -ENOMEM;
	uint32_t *v = array_reserve(u->probe_of, &u->cap_probes, (size_t)p + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	u->probe_of = v;
	v[p] = (uint32_t)(site << 1 | (size_t)ret);
	if ((size_t)p >= u->nprobes)
		u->nprobes = (size_t)p + 1;
	return 0;
}

/* The probes: each site's call, and its return, where it has one (a tail
 * call returns elsewhere, to its function's caller). */
static int add_probes(struct uv_tasks *u)
{
	for (size_t i = 0; i < u->nsites; i++) {
		const struct indirect_call *c = &u->sites[i];
		int call = uprobe_set_add(u->probes, u->library, c->offset, 0);
		if (note_probe(u, call, i, 0) < 0)
			return -ENOMEM;
		if (!c->tail &&
		    note_probe(u, uprobe_set_add(u->probes, u->library, c->offset + c->len, 0), i,
			       1) < 0)
			return -ENOMEM;
		if (c->mem)
			uprobe_set_capture_at(u->probes, call, c->reg, c->disp, 8, 0);
	}
	return 0;
}

int uv_tasks_open(pid_t pid, uint64_t rate_n, uint64_t rate_ms, int no_links, struct uv_tasks **out,
		  char *why, size_t len)
{
	struct uv_tasks *u = calloc(1, sizeof(*u));
	struct proc_ids tids;
	int err;

	*out = NULL;
	why[0] = 0;
	if (!u)
		return -ENOMEM;
	proc_ids_init(&tids);
	u->pid = pid;
	trace_limits_init(&u->limits, 0, 0, rate_n, rate_ms, time_now_ns(CLOCK_MONOTONIC));
	strpool_init(&u->names);
	u64map_init(&u->name_of);
	u->sym = symbolizer_new();
	u->procs = u->sym ? procs_new(u->sym) : NULL;
	u->namer = u->procs ? frame_namer_new(u->sym, u->procs) : NULL;
	if (!u->namer) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = procs_scan(u->procs, pid)) < 0) {
		snprintf(why, len, "no process with PID %d", (int)pid);
		goto fail;
	}
	const struct proc_map *maps, *lib = NULL;
	size_t nmaps = procs_maps(u->procs, pid, &maps);
	for (size_t i = 0; i < nmaps && !lib; i++)
		if (maps[i].file && strncmp(path_base(maps[i].path), "libuv.so", 8) == 0)
			lib = &maps[i];
	if (lib) {
		err = indirect_calls_find(sym_file_fd(lib->file), &u->sites, &u->nsites);
	} else {
		/* libuv linked into the program (Node.js): its functions,
		 * named uv_*, in the object that defines uv_run. */
		uint64_t at;
		for (size_t i = 0; i < nmaps && !lib; i++)
			if (maps[i].file &&
			    symbolizer_find_symbol(u->sym, maps[i].file, "uv_run", &at, NULL) == 0)
				lib = &maps[i];
		if (lib)
			err = embedded_sites(u, lib->file);
	}
	if (!lib) {
		err = -ENOENT;
		snprintf(why, len,
			 "process %d has no libuv: neither libuv.so.1 nor a program with libuv in it "
			 "(uv_run)",
			 (int)pid);
		goto fail;
	}
	snprintf(u->library, sizeof(u->library), "%s", lib->path);
	if (err || !u->nsites) {
		err = err ? err : -ENOENT;
		snprintf(why, len, "no callback dispatch found in %s", u->library);
		goto fail;
	}
	struct uprobe_set_config cfg = {
	    .wakeup_hits = 256, .ring_pages = 256, .no_links = no_links};
	if ((err = uprobe_set_new(&cfg, &u->probes)) < 0) {
		snprintf(why, len, "cannot open uprobes: %s", strerror(-err));
		goto fail;
	}
	if (!uprobe_set_uses_bpf(u->probes)) {
		err = -ENOTSUP;
		snprintf(why, len,
			 "--libuv reads each callback's address as it is called, which needs a BPF "
			 "program at the probes (Linux 5.15 or later, CAP_BPF)");
		goto fail;
	}
	if ((err = add_probes(u)) < 0)
		goto fail;
	if (proc_ids_list_tasks(&tids, NULL, pid, 1 << 20) < 0) {
		err = -ESRCH;
		snprintf(why, len, "no process with PID %d", (int)pid);
		goto fail;
	}
	if ((err = uprobe_set_attach(u->probes, pid, tids.ids, tids.n)) < 0) {
		snprintf(why, len, "cannot probe %s in process %d: %s", u->library, (int)pid,
			 strerror(-err));
		goto fail;
	}
	proc_ids_release(&tids);
	*out = u;
	return 0;
fail:
	proc_ids_release(&tids);
	uv_tasks_free(u);
	return err;
}

size_t uv_tasks_pollfds(const struct uv_tasks *u, int *fds, size_t max)
{
	return uprobe_set_pollfds(u->probes, fds, max);
}

int uv_tasks_tripped(const struct uv_tasks *u)
{
	return u->tripped;
}

const char *uv_tasks_comm(const struct uv_tasks *u)
{
	const char *comm = procs_comm(u->procs, u->pid);
	return comm ? comm : "?";
}

const char *uv_tasks_library(const struct uv_tasks *u)
{
	return u->library;
}

void uv_tasks_stats(const struct uv_tasks *u, struct uv_tasks_stats *st)
{
	const struct uprobe_stats *ps = uprobe_set_stats(u->probes);

	st->sites = u->nsites;
	st->callbacks = u->callbacks;
	st->lost = ps ? ps->lost : 0;
}

void uv_tasks_free(struct uv_tasks *u)
{
	if (!u)
		return;
	if (u->probes)
		uprobe_set_free(u->probes);
	if (u->namer)
		frame_namer_free(u->namer);
	if (u->procs)
		procs_free(u->procs);
	if (u->sym)
		symbolizer_free(u->sym);
	free(u->sites);
	free(u->probe_of);
	free(u->threads);
	u64map_release(&u->name_of);
	strpool_release(&u->names);
	free(u);
}
