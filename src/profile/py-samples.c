/*
 * Python frames in samples (see py-samples.h): the program's records,
 * queued per thread with their frames named, and each sample matched
 * with its own.
 */
#include "profile/py-samples.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/py-bpf.h"
#include "proc/proc-maps.h"
#include "proc/py-frames.h"
#include "proc/py-names.h"
#include "proc/select.h"
#include "profile/py-match.h"
#include "util/array.h"
#include "util/u64map.h"

#define MATCH_NS  1000000ull /* a record this near its sample is its own */
#define QUEUE_MAX 4096	     /* records queued per thread; beyond, the oldest go */
#define KEPT_MAX  65536	     /* processes or threads known before the maps are pruned */

enum { PROC_UNCHECKED, PROC_NOT_PYTHON, PROC_PYTHON };

/* A Python thread's name (threading.Thread.name), as last read. */
struct py_name {
	pid_t tid;
	char name[64];
};

struct py_proc {
	int state;
	struct py_reader *reader;
	struct py_name *names; /* of its threads, "" for one with none */
	size_t nnames, names_cap;
	uint64_t names_at; /* CLOCK_MONOTONIC ns of their last read, 0: never */
};

#define NAMES_EVERY_NS 200000000ull /* threads read again for a new one, at most */

/* One record, its frames named (ids of py-names.h). */
struct queued {
	struct py_match_run run; /* when the program ran */
	uint32_t flags;
	uint32_t n;
	uint64_t *ids;
};

struct tid_queue {
	struct queued *v;
	size_t head, n, cap; /* v[head..n) are queued */
};

struct py_samples {
	struct proc_registry *procs;
	struct py_bpf bpf;
	struct py_match match;
	struct u64map procs_by_pid; /* pid -> struct py_proc * */
	struct u64map queues;	    /* tid -> struct tid_queue * */
	uint64_t *stack;	    /* py_samples_stack()'s buffer */
	pid_t waiting_pid;	    /* py_samples_waiting(): the threads of this process */
	struct py_thread *waiting;
	size_t nwaiting;
	size_t stack_cap;
	struct py_samples_stats st;
};

/* Drops the oldest record queued. */
static void pop(struct tid_queue *q)
{
	free(q->v[q->head].ids);
	q->head++;
	if (q->head == q->n)
		q->head = q->n = 0;
}

/* Pruning (a recording of every process for days meets millions): what
 * is kept of processes that are not CPythons, or have ended, and of
 * threads with nothing queued, goes; a process is looked at again at its
 * next sample. */
struct prune {
	struct py_samples *p;
	struct u64map keep;
};

static void prune_proc(void *ctx, uint64_t key, uint64_t val)
{
	struct prune *pr = ctx;
	struct py_proc *pp = (struct py_proc *)(uintptr_t)val;

	if (pp->state == PROC_PYTHON && kill((pid_t)key, 0) == 0 &&
	    u64map_put(&pr->keep, key, val) == 0)
		return;
	if (pp->state == PROC_PYTHON)
		py_bpf_set_process(&pr->p->bpf, (pid_t)key, NULL);
	py_reader_free(pp->reader);
	free(pp->names);
	free(pp);
}

static void prune_queue(void *ctx, uint64_t key, uint64_t val)
{
	struct prune *pr = ctx;
	struct tid_queue *q = (struct tid_queue *)(uintptr_t)val;

	if (q->head < q->n && u64map_put(&pr->keep, key, val) == 0)
		return;
	while (q->head < q->n)
		pop(q);
	free(q->v);
	free(q);
}

static void prune(struct py_samples *p, struct u64map *m,
		  void (*fn)(void *ctx, uint64_t key, uint64_t val))
{
	struct prune pr = {.p = p};

	if (u64map_count(m) < KEPT_MAX)
		return;
	u64map_init(&pr.keep);
	u64map_each(m, fn, &pr);
	u64map_release(m);
	*m = pr.keep;
}

static struct py_proc *proc_of(struct py_samples *p, pid_t pid)
{
	uint64_t v;

	if (u64map_get(&p->procs_by_pid, (uint64_t)pid, &v))
		return (struct py_proc *)(uintptr_t)v;
	prune(p, &p->procs_by_pid, prune_proc);
	struct py_proc *pp = calloc(1, sizeof(*pp));
	if (!pp || u64map_put(&p->procs_by_pid, (uint64_t)pid, (uint64_t)(uintptr_t)pp) < 0) {
		free(pp);
		return NULL;
	}
	return pp;
}

/* Whether pid maps a file of Python's: the cheap test before its
 * symbols are looked at. */
static int maps_python(struct proc_registry *procs, pid_t pid)
{
	const struct proc_map *maps;
	size_t n = procs_maps(procs, pid, &maps);

	for (size_t i = 0; i < n; i++) {
		const char *base = maps[i].path ? strrchr(maps[i].path, '/') : NULL;
		if (base && strstr(base, "python"))
			return 1;
	}
	return 0;
}

int py_samples_frame(struct py_reader *r, const uint64_t fr[4], struct py_frame *f)
{
	uint64_t code = fr[0] & ~(uint64_t)PY_FRAME_BITS, module = fr[2], globals = 0;

	if (module & PY_MODULE_GLOBALS) {
		globals = module & ~(uint64_t)PY_MODULE_GLOBALS;
		module = 0;
	}
	return py_reader_frame(r, code, fr[1], module, globals, fr[3], (fr[0] & PY_FRAME_GEN) != 0,
			       f);
}

void py_samples_layout(const struct py_chain *c, struct py_bpf_layout *L)
{
	*L = (struct py_bpf_layout){
	    .runtime = c->runtime,
	    .rt_interp_head = c->rt_interp_head,
	    .interp_threads_head = c->interp_threads_head,
	    .ts_next = c->ts_next,
	    .ts_native_tid = c->ts_native_tid,
	    .ts_cframe = c->ts_cframe,
	    .ts_frame = c->ts_frame,
	    .fr_code = c->fr_code,
	    .fr_func = c->fr_func,
	    .fr_globals = c->fr_globals,
	    .fr_previous = c->fr_previous,
	    .fr_instr = c->fr_instr,
	    .fr_owner = c->fr_owner,
	    .fr_is_entry = c->fr_is_entry,
	    .fr_size = c->fr_size,
	    .func_module = c->func_module,
	    .code_qualname = c->code_qualname,
	};
}

static void check(struct py_samples *p, pid_t pid, struct py_proc *pp)
{
	struct py_chain c;

	pp->state = PROC_NOT_PYTHON;
	if (!maps_python(p->procs, pid) ||
	    py_reader_open(p->procs, procs_symbolizer(p->procs), pid, &pp->reader) != 0)
		return;
	if (py_reader_chain(pp->reader, &c) != 0) {
		py_reader_free(pp->reader);
		pp->reader = NULL;
		return;
	}
	struct py_bpf_layout L;
	py_samples_layout(&c, &L);
	if (py_bpf_set_process(&p->bpf, pid, &L) != 0) {
		py_reader_free(pp->reader);
		pp->reader = NULL;
		return;
	}
	pp->state = PROC_PYTHON;
	p->st.processes++;
	if (!p->st.version[0])
		snprintf(p->st.version, sizeof(p->st.version), "%s", py_reader_version(pp->reader));
}

void py_samples_watch(struct py_samples *p, pid_t pid)
{
	struct py_proc *pp = proc_of(p, pid);

	if (pp && pp->state == PROC_UNCHECKED)
		check(p, pid, pp);
}

void py_samples_watch_named(struct py_samples *p, void (*scanned)(void *arg, pid_t pid), void *arg)
{
	pid_t *pids;
	size_t n;

	/* Any path with "python" in it: check() tells a CPython by its
	 * symbols, so a wider net costs a scan and changes no answer. */
	if (proc_select("exe:*python*", &pids, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (procs_scan(p->procs, pids[i]) != 0)
			continue;
		if (scanned)
			scanned(arg, pids[i]);
		py_samples_watch(p, pids[i]);
	}
	free(pids);
}

int py_samples_is_python(struct py_samples *p, pid_t pid)
{
	uint64_t v;

	return u64map_get(&p->procs_by_pid, (uint64_t)pid, &v) &&
	       ((struct py_proc *)(uintptr_t)v)->state == PROC_PYTHON;
}

void py_samples_exec(struct py_samples *p, pid_t pid)
{
	uint64_t v;

	if (!u64map_get(&p->procs_by_pid, (uint64_t)pid, &v))
		return;
	struct py_proc *pp = (struct py_proc *)(uintptr_t)v;
	if (pp->state == PROC_PYTHON)
		py_bpf_set_process(&p->bpf, pid, NULL);
	py_reader_free(pp->reader);
	pp->reader = NULL;
	pp->state = PROC_UNCHECKED;
}

static struct tid_queue *queue_of(struct py_samples *p, pid_t tid, int make)
{
	uint64_t v;

	if (u64map_get(&p->queues, (uint64_t)tid, &v))
		return (struct tid_queue *)(uintptr_t)v;
	if (!make)
		return NULL;
	prune(p, &p->queues, prune_queue);
	struct tid_queue *q = calloc(1, sizeof(*q));
	if (!q || u64map_put(&p->queues, (uint64_t)tid, (uint64_t)(uintptr_t)q) < 0) {
		free(q);
		return NULL;
	}
	return q;
}

void py_samples_thread_exit(struct py_samples *p, pid_t tid)
{
	struct tid_queue *q = queue_of(p, tid, 0);

	while (q && q->head < q->n)
		pop(q);
}

/* A record read from the ring: its frames named, queued on its thread. */
static void take(const struct py_bpf_record *rec, size_t size, void *arg)
{
	struct py_samples *p = arg;
	uint64_t v;
	(void)size;

	if (!u64map_get(&p->procs_by_pid, rec->pid, &v))
		return;
	struct py_proc *pp = (struct py_proc *)(uintptr_t)v;
	struct tid_queue *q = queue_of(p, (pid_t)rec->tid, 1);
	if (!pp->reader || !q)
		return;
	if (q->n - q->head >= QUEUE_MAX)
		pop(q);
	if (q->head && q->n == q->cap) { /* room at the front: move down */
		memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof(*q->v));
		q->n -= q->head;
		q->head = 0;
	}
	struct queued *nv = array_reserve(q->v, &q->cap, q->n + 1, sizeof(*nv));
	if (!nv)
		return;
	q->v = nv;
	struct queued *e = &q->v[q->n];
	e->run.start = rec->time;
	e->run.end = rec->time_end;
	e->flags = rec->flags;
	e->n = 0;
	e->ids = rec->n ? malloc(rec->n * sizeof(*e->ids)) : NULL;
	if (rec->n && !e->ids)
		return;
	struct py_names *names = procs_py_names(p->procs);
	for (uint32_t i = 0; i < rec->n && names; i++) {
		struct py_frame f;
		int rc = py_samples_frame(pp->reader, (const uint64_t *)rec->frames[i], &f);
		if (rc > 0)
			continue; /* set up, not run yet: not shown */
		uint64_t id;
		if (rc < 0) {
			p->st.unread++;
			id = py_names_id(names, "[unknown Python code]", "", 0);
		} else {
			id = py_names_id(names, f.name, f.file, f.line);
		}
		if (!id)
			continue;
		if (rec->frames[i][0] & PY_FRAME_ENTRY)
			id |= PY_STACK_ENTRY;
		e->ids[e->n++] = id;
	}
	q->n++;
}

int py_samples_new(struct proc_registry *procs, uint64_t period_ns, int family_fd,
		   struct py_samples **out, char *log, size_t log_len)
{
	struct py_samples *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->procs = procs;
	py_match_init(&p->match, period_ns / 2 < MATCH_NS ? period_ns / 2 : MATCH_NS);
	u64map_init(&p->procs_by_pid);
	u64map_init(&p->queues);
	int err = py_bpf_new(&p->bpf, take, p, family_fd, log, log_len);
	if (err) {
		u64map_release(&p->procs_by_pid);
		u64map_release(&p->queues);
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

static void free_proc(void *ctx, uint64_t key, uint64_t val)
{
	struct py_proc *pp = (struct py_proc *)(uintptr_t)val;
	(void)ctx;
	(void)key;

	py_reader_free(pp->reader);
	free(pp->names);
	free(pp);
}

static void free_queue(void *ctx, uint64_t key, uint64_t val)
{
	struct tid_queue *q = (struct tid_queue *)(uintptr_t)val;
	(void)ctx;
	(void)key;

	while (q->head < q->n)
		pop(q);
	free(q->v);
	free(q);
}

/* The names of pp's threads, read from the process now. A running
 * thread's chain can change while it is read, and be cut before its
 * Thread's frame: the threads are read again, a few times, while one is. */
static void read_names(struct py_proc *pp, uint64_t now)
{
	struct py_thread *t = NULL;
	size_t n = 0;

	pp->names_at = now;
	pp->nnames = 0;
	for (int tries = 0; tries < 4; tries++) {
		free(t);
		if (py_reader_threads(pp->reader, SIZE_MAX, &t, &n) < 0)
			return;
		size_t cut = 0;
		for (size_t i = 0; i < n; i++)
			cut += t[i].cut && !t[i].name[0];
		if (!cut)
			break;
	}
	struct py_name *v = array_reserve(pp->names, &pp->names_cap, n, sizeof(*v));
	if (v) {
		pp->names = v;
		for (size_t i = 0; i < n; i++) {
			/* A chain cut short (it changed as it was read: the
			 * thread runs) may not have reached the Thread's
			 * frame: left out, to be read again. */
			if (t[i].cut && !t[i].name[0])
				continue;
			/* A threading.Thread (its outermost frame is
			 * Thread._bootstrap) whose name was not read, or a
			 * thread without frames yet: one just started, whose
			 * chain has not reached _bootstrap_inner's frame, or
			 * whose Thread's __dict__ was growing as it was read
			 * (_bootstrap_inner sets _ident, _native_id...). Left
			 * out too: on a busy machine its first samples can
			 * come that early. */
			if (!t[i].name[0] &&
			    (!t[i].n || strcmp(t[i].frames[t[i].n - 1].name,
					       "threading.Thread._bootstrap") == 0))
				continue;
			v[pp->nnames].tid = t[i].tid;
			memcpy(v[pp->nnames].name, t[i].name, sizeof(v[0].name));
			pp->nnames++;
		}
	}
	free(t);
}

const char *py_samples_thread_name(struct py_samples *p, pid_t pid, pid_t tid, uint64_t now,
				   int *found)
{
	uint64_t v;

	*found = 0;
	if (!u64map_get(&p->procs_by_pid, (uint64_t)pid, &v))
		return NULL;
	struct py_proc *pp = (struct py_proc *)(uintptr_t)v;
	if (pp->state != PROC_PYTHON || !pp->reader)
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < pp->nnames; i++)
			if (pp->names[i].tid == tid) {
				*found = 1;
				return pp->names[i].name[0] ? pp->names[i].name : NULL;
			}
		/* A thread not known yet: the threads are read again, not
		 * more often than NAMES_EVERY_NS. */
		if (pass || (pp->names_at && now - pp->names_at < NAMES_EVERY_NS))
			break;
		read_names(pp, now);
	}
	return NULL;
}

void py_samples_free(struct py_samples *p)
{
	if (!p)
		return;
	py_bpf_release(&p->bpf);
	u64map_each(&p->procs_by_pid, free_proc, NULL);
	u64map_each(&p->queues, free_queue, NULL);
	u64map_release(&p->procs_by_pid);
	u64map_release(&p->queues);
	free(p->stack);
	free(p->waiting);
	free(p);
}

void py_samples_read(struct py_samples *p)
{
	py_bpf_read(&p->bpf);
}

int py_samples_prog_fd(const struct py_samples *p)
{
	return p->bpf.prog_fd;
}

/* The stack: frames, then PY_STACK_MARK and ids (n of them), in p's
 * buffer; frames itself when out of memory. */
static const uint64_t *with_python(struct py_samples *p, const uint64_t *frames, size_t n,
				   const uint64_t *ids, size_t nids, size_t *nout)
{
	uint64_t *v = array_reserve(p->stack, &p->stack_cap, n + 1 + nids, sizeof(*v));

	*nout = n;
	if (!v || !nids)
		return frames;
	p->stack = v;
	memcpy(v, frames, n * sizeof(*v));
	v[n] = PY_STACK_MARK;
	memcpy(v + n + 1, ids, nids * sizeof(*v));
	/* The outermost frame is the first of its C call. */
	v[n + nids] |= PY_STACK_ENTRY;
	*nout = n + 1 + nids;
	return v;
}

/* The record of the sample of tid at time, or NULL (py-match.h); the
 * ones before it were the records of samples perf lost, and go. */
static struct queued *match(struct py_samples *p, struct tid_queue *q, uint64_t time)
{
	if (!q)
		return NULL;
	while (q->head < q->n &&
	       py_match_orphan(&p->match, &q->v[q->head].run,
			       q->head + 1 < q->n ? &q->v[q->head + 1].run : NULL, time))
		pop(q);
	if (q->head == q->n)
		return NULL;
	enum py_match_take t = py_match_take(&p->match, &q->v[q->head].run, time);
	if (t == PY_TAKE_YES || (t == PY_TAKE_IF_NO_DROPS && py_bpf_dropped(&p->bpf) == 0))
		return &q->v[q->head];
	return NULL;
}

const uint64_t *py_samples_stack(struct py_samples *p, pid_t pid, pid_t tid, uint64_t time,
				 const uint64_t *frames, size_t n, size_t *nout)
{
	struct py_proc *pp = proc_of(p, pid);

	*nout = n;
	if (!pp)
		return frames;
	if (pp->state == PROC_UNCHECKED)
		check(p, pid, pp);
	if (pp->state != PROC_PYTHON)
		return frames;
	struct queued *e = match(p, queue_of(p, tid, 0), time);
	if (!e) {
		/* Its record was written in the same interrupt as the
		 * sample: it is in the ring by now, if not read yet. */
		py_bpf_read(&p->bpf);
		e = match(p, queue_of(p, tid, 0), time);
	}
	if (!e) {
		p->st.unmatched++;
		return frames;
	}
	if (e->flags & PY_REC_CUT)
		p->st.cut++;
	if (!e->n) {
		p->st.native++;
		pop(queue_of(p, tid, 0));
		return frames;
	}
	const uint64_t *v = with_python(p, frames, n, e->ids, e->n, nout);
	p->st.matched++;
	pop(queue_of(p, tid, 0));
	return v;
}

const uint64_t *py_samples_waiting(struct py_samples *p, pid_t pid, pid_t tid,
				   const uint64_t *frames, size_t n, size_t *nout)
{
	struct py_proc *pp = pid ? proc_of(p, pid) : NULL;

	if (pid != p->waiting_pid) {
		free(p->waiting);
		p->waiting = NULL;
		p->nwaiting = 0;
		p->waiting_pid = pid;
		if (pp && pp->state == PROC_PYTHON &&
		    py_reader_threads(pp->reader, PY_BPF_TIDS, &p->waiting, &p->nwaiting) != 0)
			p->nwaiting = 0;
	}
	if (nout)
		*nout = n;
	struct py_names *names = procs_py_names(p->procs);
	for (size_t i = 0; i < p->nwaiting && names; i++) {
		const struct py_thread *t = &p->waiting[i];
		if (t->tid != tid || !t->n)
			continue;
		uint64_t ids[PY_MAX_FRAMES];
		size_t nids = 0;
		for (size_t k = 0; k < t->n; k++) {
			const struct py_frame *f = &t->frames[k];
			uint64_t id = py_names_id(names, f->name, f->file, f->line);
			if (id)
				ids[nids++] = id | (f->entry ? PY_STACK_ENTRY : 0);
		}
		if (t->cut)
			p->st.cut++;
		p->st.matched++;
		return with_python(p, frames, n, ids, nids, nout);
	}
	return frames;
}

void py_samples_get_stats(struct py_samples *p, struct py_samples_stats *st)
{
	*st = p->st;
	st->dropped = py_bpf_dropped(&p->bpf);
}
