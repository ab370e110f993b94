/*
 * The snapshots of `recce top` (see top-model.h): rows from /proc, rates
 * against the previous snapshot, the hot and last function of each row
 * from the interval's samples, and a ring of the last intervals' samples
 * for the stack views. Pure computation: nothing here reads a file or a
 * ring, so the unit tests drive it with made-up tasks and samples.
 */
#include "top/top-model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

struct sample {
	pid_t pid, tid;
	uint64_t time;
	const char *function;
	uint32_t nframes;
	size_t off; /* into the interval's frames */
};

struct interval {
	struct sample *samples;
	size_t n, cap;
	uint64_t *frames;
	size_t nframes, frames_cap;
	uint64_t dropped;
};

/* A sample of the history: which interval, which sample. */
struct sample_ref {
	uint32_t interval;
	uint32_t index;
};

struct top_model {
	struct top_model_config cfg;
	/* history + 1 slots: the one being filled and `history` complete ones */
	struct interval *hist;
	unsigned nslots, cur, filled;

	struct top_row *rows, *prev;
	size_t nrows, nprev, rows_cap, prev_cap;
	struct procstat_task *procs, *prev_procs; /* whole-process ticks, by pid */
	size_t nprocs, procs_cap, nprev_procs, prev_procs_cap;
	int have_prev;
	double interval;

	struct procstat_system *sys, *prev_sys;
	int have_sys, have_prev_sys;
	uint64_t self_ticks, prev_self_ticks;
	struct top_cpu_use *cpus;
	struct top_header header;

	const struct top_row **view;
	size_t view_cap;
	enum top_sort sort_key;
	struct top_stack *stacks;
	size_t stacks_cap;
	struct sample_ref *refs;
	size_t refs_cap;
};

/* Grows *buf to hold at least need elements of size bytes. */
static int grow(void **buf, size_t *cap, size_t need, size_t size)
{
	void *n = array_reserve(*buf, cap, need, size);

	if (!n)
		return -ENOMEM;
	*buf = n;
	return 0;
}

int top_model_new(const struct top_model_config *cfg, struct top_model **out)
{
	if (cfg->ticks_per_s <= 0 || cfg->page_kb <= 0)
		return -EINVAL;
	struct top_model *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->cfg = *cfg;
	if (m->cfg.history < 1)
		m->cfg.history = 1;
	if (m->cfg.history > TOP_MAX_HISTORY)
		m->cfg.history = TOP_MAX_HISTORY;
	m->nslots = m->cfg.history + 1;
	m->hist = calloc(m->nslots, sizeof(*m->hist));
	m->sys = malloc(sizeof(*m->sys));
	m->prev_sys = malloc(sizeof(*m->prev_sys));
	m->cpus = calloc(PROCSTAT_MAX_CPUS, sizeof(*m->cpus));
	if (!m->hist || !m->sys || !m->prev_sys || !m->cpus) {
		top_model_free(m);
		return -ENOMEM;
	}
	m->header.cpus = m->cpus;
	*out = m;
	return 0;
}

void top_model_free(struct top_model *m)
{
	if (!m)
		return;
	for (unsigned i = 0; m->hist && i < m->nslots; i++) {
		free(m->hist[i].samples);
		free(m->hist[i].frames);
	}
	free(m->hist);
	free(m->rows);
	free(m->prev);
	free(m->procs);
	free(m->prev_procs);
	free(m->sys);
	free(m->prev_sys);
	free(m->cpus);
	free(m->view);
	free(m->stacks);
	free(m->refs);
	free(m);
}

/* A buffer of the last snapshot (*now, with its capacity and count)
 * becomes the previous one's, whose memory is reused, emptied. */
static void to_previous(void **now, size_t *now_cap, size_t *now_n, void **prev, size_t *prev_cap,
			size_t *prev_n)
{
	void *t = *prev;
	size_t tcap = *prev_cap;

	*prev = *now;
	*prev_cap = *now_cap;
	*prev_n = *now_n;
	*now = t;
	*now_cap = tcap;
	*now_n = 0;
}

void top_model_begin(struct top_model *m, double interval)
{
	to_previous((void **)&m->rows, &m->rows_cap, &m->nrows, (void **)&m->prev, &m->prev_cap,
		    &m->nprev);
	to_previous((void **)&m->procs, &m->procs_cap, &m->nprocs, (void **)&m->prev_procs,
		    &m->prev_procs_cap, &m->nprev_procs);
	m->interval = interval > 0 ? interval : 0;
	m->have_sys = 0;
}

int top_model_add_task(struct top_model *m, const struct procstat_task *t)
{
	if (grow((void **)&m->rows, &m->rows_cap, m->nrows + 1, sizeof(*m->rows)) < 0)
		return -ENOMEM;
	struct top_row *r = &m->rows[m->nrows++];
	memset(r, 0, sizeof(*r));
	r->pid = t->pid;
	r->tid = m->cfg.by_process ? t->pid : t->tid;
	memcpy(r->name, t->comm, sizeof(r->name));
	r->name[sizeof(r->name) - 1] = 0;
	r->state = t->state;
	r->rss_kb = t->rss_pages * (uint64_t)m->cfg.page_kb;
	r->nthreads = 1;
	r->starttime = t->starttime;
	r->ticks_user = t->utime;
	r->ticks_sys = t->stime;
	r->vcsw = t->vcsw;
	r->ivcsw = t->ivcsw;
	r->read_ns = t->read_ns;
	/* In process mode, the main thread names the process; remember
	 * whether this row is it (rates are not computed yet). */
	r->samples = (m->cfg.by_process && t->tid == t->pid) ? 1 : 0;
	return 0;
}

int top_model_add_process(struct top_model *m, const struct procstat_task *t)
{
	if (grow((void **)&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs)) < 0)
		return -ENOMEM;
	m->procs[m->nprocs++] = *t;
	return 0;
}

static int compare_procs(const void *a, const void *b)
{
	const struct procstat_task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The whole-process ticks of pid among n read (sorted by pid), or NULL. */
static const struct procstat_task *find_in(const struct procstat_task *procs, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (procs[mid].pid == pid)
			return &procs[mid];
		if (procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The whole-process ticks of pid read this snapshot, or NULL. */
static const struct procstat_task *find_process(const struct top_model *m, pid_t pid)
{
	return find_in(m->procs, m->nprocs, pid);
}

int top_model_add_sample(struct top_model *m, pid_t pid, pid_t tid, uint64_t time,
			 const char *function, const uint64_t *frames, size_t nframes)
{
	struct interval *iv = &m->hist[m->cur];

	if (nframes > TOP_MAX_FRAMES)
		nframes = TOP_MAX_FRAMES;
	if (iv->n >= TOP_MAX_SAMPLES ||
	    grow((void **)&iv->samples, &iv->cap, iv->n + 1, sizeof(*iv->samples)) < 0 ||
	    grow((void **)&iv->frames, &iv->frames_cap, iv->nframes + nframes,
		 sizeof(*iv->frames)) < 0) {
		iv->dropped++;
		return -ENOSPC;
	}
	struct sample *s = &iv->samples[iv->n++];
	s->pid = pid;
	s->tid = tid;
	s->time = time;
	s->function = function;
	s->nframes = (uint32_t)nframes;
	s->off = iv->nframes;
	if (nframes)
		memcpy(iv->frames + iv->nframes, frames, nframes * sizeof(*frames));
	iv->nframes += nframes;
	return 0;
}

void top_model_set_system(struct top_model *m, const struct procstat_system *sys,
			  uint64_t self_ticks)
{
	memcpy(m->sys, sys, sizeof(*sys));
	m->self_ticks = self_ticks;
	m->have_sys = 1;
}

static int compare_key(pid_t pa, pid_t ta, pid_t pb, pid_t tb)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return (ta > tb) - (ta < tb);
}

static int compare_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return compare_key(x->pid, x->tid, y->pid, y->tid);
}

static struct top_row *find_row(struct top_row *rows, size_t n, pid_t pid, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_key(rows[mid].pid, rows[mid].tid, pid, tid);
		if (c == 0)
			return &rows[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct top_row *top_model_find(const struct top_model *m, pid_t pid, pid_t tid)
{
	return find_row(m->rows, m->nrows, pid, m->cfg.by_process ? pid : tid);
}

static int state_rank(char s)
{
	return s == 'R' ? 3 : s == 'D' ? 2 : 0;
}

/* Process mode: the task rows of one process become one row. The main
 * thread (marked by samples == 1 in top_model_add_task) names it and
 * gives its start time; a running thread makes it running. */
static void merge_processes(struct top_model *m)
{
	size_t out = 0;

	for (size_t i = 0; i < m->nrows;) {
		struct top_row r = m->rows[i];
		int main_seen = r.samples;
		size_t j = i + 1;
		for (; j < m->nrows && m->rows[j].pid == r.pid; j++) {
			const struct top_row *t = &m->rows[j];
			r.ticks_user += t->ticks_user;
			r.ticks_sys += t->ticks_sys;
			r.vcsw += t->vcsw;
			r.ivcsw += t->ivcsw;
			r.nthreads++;
			if (t->samples && !main_seen) {
				memcpy(r.name, t->name, sizeof(r.name));
				r.starttime = t->starttime;
				main_seen = 1;
			} else if (!main_seen && t->starttime < r.starttime) {
				r.starttime = t->starttime;
			}
			if (state_rank(t->state) > state_rank(r.state))
				r.state = t->state;
		}
		const struct procstat_task *whole = find_process(m, r.pid);
		if (whole) {
			r.ticks_user = whole->utime;
			r.ticks_sys = whole->stime;
			r.read_ns = whole->read_ns;
		}
		r.samples = 0;
		m->rows[out++] = r;
		i = j;
	}
	m->nrows = out;
}

static double per_second(uint64_t now, uint64_t before, double interval)
{
	return now > before && interval > 0 ? (double)(now - before) / interval : 0;
}

static void compute_rates(struct top_model *m)
{
	double tps = (double)m->cfg.ticks_per_s;

	for (size_t i = 0; i < m->nrows; i++) {
		struct top_row *r = &m->rows[i];
		r->samples = 0;
		struct top_row *p = find_row(m->prev, m->nprev, r->pid, r->tid);
		if (p && p->starttime != r->starttime)
			p = NULL; /* a reused id: another task */
		if (p) {
			r->last = p->last;
			r->last_time = p->last_time;
		}
		if (!m->have_prev)
			continue;
		/* A task not in the previous snapshot was born since: all its
		 * ticks belong to this interval. */
		uint64_t u0 = p ? p->ticks_user : 0, s0 = p ? p->ticks_sys : 0;
		uint64_t v0 = p ? p->vcsw : 0, i0 = p ? p->ivcsw : 0;
		double dt = m->interval;
		if (p && p->read_ns && r->read_ns > p->read_ns)
			dt = (double)(r->read_ns - p->read_ns) / 1e9;
		r->cpu_user = per_second(r->ticks_user, u0, dt) / tps * 100;
		r->cpu_sys = per_second(r->ticks_sys, s0, dt) / tps * 100;
		r->vcsw_rate = per_second(r->vcsw, v0, dt);
		r->ivcsw_rate = per_second(r->ivcsw, i0, dt);
	}
}

/*
 * Thread mode: the CPU time of threads that ended during the interval, as a row of their own
 * (TOP_ENDED_TID) under each process whose whole ticks were read now and before: the process's
 * CPU less its live threads'. A thread that starts and ends between two reads (a thread per
 * request) is in no other row. Shown when a thread of the previous snapshot is gone, or when the
 * rest is too large to be the difference of two reads of ticks. Rows stay sorted.
 */
static int add_ended_rows(struct top_model *m)
{
	double tps = (double)m->cfg.ticks_per_s;
	size_t nrows = m->nrows, r = 0, q = 0;

	for (size_t k = 0; k < m->nprocs && m->have_prev; k++) {
		const struct procstat_task *w = &m->procs[k];
		const struct procstat_task *p = find_in(m->prev_procs, m->nprev_procs, w->pid);
		double cpu_user = 0, cpu_sys = 0, dt = m->interval;
		int gone = 0;
		if (p && p->read_ns && w->read_ns > p->read_ns)
			dt = (double)(w->read_ns - p->read_ns) / 1e9;
		if (p && p->starttime == w->starttime) {
			cpu_user = per_second(w->utime, p->utime, dt) / tps * 100;
			cpu_sys = per_second(w->stime, p->stime, dt) / tps * 100;
		}
		for (; r < nrows && m->rows[r].pid < w->pid; r++)
			;
		for (; r < nrows && m->rows[r].pid == w->pid; r++) {
			cpu_user -= m->rows[r].cpu_user;
			cpu_sys -= m->rows[r].cpu_sys;
		}
		for (; q < m->nprev && m->prev[q].pid < w->pid; q++)
			;
		for (; q < m->nprev && m->prev[q].pid == w->pid; q++)
			gone |= m->prev[q].tid != TOP_ENDED_TID &&
				!find_row(m->rows, nrows, w->pid, m->prev[q].tid);
		cpu_user = cpu_user > 0 ? cpu_user : 0;
		cpu_sys = cpu_sys > 0 ? cpu_sys : 0;
		if (cpu_user + cpu_sys < (gone ? 1.0 : 5.0))
			continue;
		if (grow((void **)&m->rows, &m->rows_cap, m->nrows + 1, sizeof(*m->rows)) < 0)
			return -ENOMEM;
		struct top_row *e = &m->rows[m->nrows++];
		memset(e, 0, sizeof(*e));
		e->pid = w->pid;
		e->tid = TOP_ENDED_TID;
		snprintf(e->name, sizeof(e->name), "%s", TOP_ENDED_NAME);
		e->state = 'X';
		e->rss_kb = w->rss_pages * (uint64_t)m->cfg.page_kb;
		e->starttime = w->starttime;
		e->cpu_user = cpu_user;
		e->cpu_sys = cpu_sys;
	}
	if (m->nrows > nrows)
		qsort(m->rows, m->nrows, sizeof(*m->rows), compare_rows);
	return 0;
}

static int compare_sample_refs(const void *a, const void *b, void *arg)
{
	const struct sample *base = arg;
	const struct sample *x = &base[((const struct sample_ref *)a)->index];
	const struct sample *y = &base[((const struct sample_ref *)b)->index];
	int c = compare_key(x->pid, x->tid, y->pid, y->tid);

	if (c)
		return c;
	if (x->function != y->function)
		return (uintptr_t)x->function < (uintptr_t)y->function ? -1 : 1;
	return 0;
}

/* The hot function of each row: the samples of the interval sorted by
 * row and function, counted run by run. */
static int assign_samples(struct top_model *m, struct interval *iv)
{
	if (iv->n == 0)
		return 0;
	if (grow((void **)&m->refs, &m->refs_cap, iv->n, sizeof(*m->refs)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < iv->n; i++) {
		/* A process row gathers its threads' samples; the stack views
		 * of process mode match on the pid alone. */
		if (m->cfg.by_process)
			iv->samples[i].tid = iv->samples[i].pid;
		/* A thread that ended has no row: its process's ended row
		 * gathers its samples, if it has one. */
		else if (!find_row(m->rows, m->nrows, iv->samples[i].pid, iv->samples[i].tid) &&
			 find_row(m->rows, m->nrows, iv->samples[i].pid, TOP_ENDED_TID))
			iv->samples[i].tid = TOP_ENDED_TID;
		m->refs[i].interval = m->cur;
		m->refs[i].index = (uint32_t)i;
	}
	qsort_r(m->refs, iv->n, sizeof(*m->refs), compare_sample_refs, iv->samples);
	for (size_t i = 0; i < iv->n;) {
		const struct sample *first = &iv->samples[m->refs[i].index];
		struct top_row *r = find_row(m->rows, m->nrows, first->pid, first->tid);
		size_t end = i;
		const char *best = NULL;
		size_t best_n = 0;
		while (end < iv->n) {
			const struct sample *s = &iv->samples[m->refs[end].index];
			if (s->pid != first->pid || s->tid != first->tid)
				break;
			size_t run = end;
			while (run < iv->n && iv->samples[m->refs[run].index].pid == s->pid &&
			       iv->samples[m->refs[run].index].tid == s->tid &&
			       iv->samples[m->refs[run].index].function == s->function) {
				const struct sample *q = &iv->samples[m->refs[run].index];
				if (r && q->function && q->time >= r->last_time) {
					r->last = q->function;
					r->last_time = q->time;
				}
				run++;
			}
			if (s->function && run - end > best_n) {
				best = s->function;
				best_n = run - end;
			}
			end = run;
		}
		if (r) {
			r->samples = (uint32_t)(end - i);
			r->hot = best;
			r->hot_share = r->samples ? (double)best_n / r->samples : 0;
		}
		i = end;
	}
	return 0;
}

static void compute_header(struct top_model *m, const struct interval *iv)
{
	struct top_header *h = &m->header;
	double tps = (double)m->cfg.ticks_per_s;

	h->interval = m->interval;
	h->samples = iv->n;
	h->dropped = iv->dropped;
	h->cpu = 0;
	h->rss_kb = 0;
	h->threads = 0;
	h->processes = 0;
	h->csw_rate = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct top_row *r = &m->rows[i];
		h->cpu += r->cpu_user + r->cpu_sys;
		h->csw_rate += r->vcsw_rate + r->ivcsw_rate;
		h->threads += (size_t)r->nthreads;
		if (i == 0 || m->rows[i - 1].pid != r->pid) {
			h->processes++;
			h->rss_kb += r->rss_kb;
		}
	}
	if (!m->have_sys)
		return;
	const struct procstat_system *s = m->sys, *p = m->prev_sys;
	h->uptime = s->uptime;
	memcpy(h->load, s->load, sizeof(h->load));
	h->mem_total_kb = s->mem_total_kb;
	h->mem_available_kb = s->mem_available_kb;
	h->ncpus = s->ncpus;
	for (size_t c = 0; c <= s->ncpus; c++) {
		const struct procstat_cpu *now = c < s->ncpus ? &s->cpu[c] : &s->total;
		const struct procstat_cpu *was = c < s->ncpus ? &p->cpu[c] : &p->total;
		struct top_cpu_use *u = c < s->ncpus ? &m->cpus[c] : &h->all;
		memset(u, 0, sizeof(*u));
		if (!m->have_prev_sys || (c < s->ncpus && c >= p->ncpus))
			continue;
		uint64_t all = procstat_cpu_all(now) - procstat_cpu_all(was);
		if (!all || procstat_cpu_all(now) < procstat_cpu_all(was))
			continue;
		u->busy = 100.0 * (double)(procstat_cpu_busy(now) - procstat_cpu_busy(was)) / all;
		u->user = 100.0 * (double)(now->user + now->nice - was->user - was->nice) / all;
		u->sys = 100.0 *
			 (double)(now->system + now->irq + now->softirq - was->system - was->irq -
				  was->softirq) /
			 all;
	}
	h->self_cpu = m->have_prev_sys
			  ? per_second(m->self_ticks, m->prev_self_ticks, m->interval) / tps * 100
			  : 0;
}

int top_model_end(struct top_model *m)
{
	struct interval *iv = &m->hist[m->cur];

	if (m->nrows > 1) /* rows is NULL until one was added */
		qsort(m->rows, m->nrows, sizeof(*m->rows), compare_rows);
	/* By pid, for find_process() and add_ended_rows(): -p takes them in
	 * any order. */
	if (m->nprocs > 1)
		qsort(m->procs, m->nprocs, sizeof(*m->procs), compare_procs);
	if (m->cfg.by_process)
		merge_processes(m);
	compute_rates(m);
	int err = m->cfg.by_process ? 0 : add_ended_rows(m);
	if (!err)
		err = assign_samples(m, iv);
	compute_header(m, iv);
	if (m->have_sys) {
		struct procstat_system *t = m->prev_sys;
		m->prev_sys = m->sys;
		m->sys = t;
		m->prev_self_ticks = m->self_ticks;
		m->have_prev_sys = 1;
	}
	m->have_prev = 1;
	/* The interval is complete: the next one fills the oldest slot. */
	m->cur = (m->cur + 1) % m->nslots;
	if (m->filled < m->nslots - 1)
		m->filled++;
	struct interval *next = &m->hist[m->cur];
	next->n = 0;
	next->nframes = 0;
	next->dropped = 0;
	return err;
}

const struct top_header *top_model_header(const struct top_model *m)
{
	return &m->header;
}

size_t top_model_rows(const struct top_model *m, const struct top_row **rows)
{
	*rows = m->rows;
	return m->nrows;
}

static int row_matches(const struct top_row *r, const char *filter)
{
	char *end;
	long v = strtol(filter, &end, 10);

	if (!*end && end != filter)
		return v == r->pid || v == r->tid;
	return strstr(r->name, filter) || (r->hot && strstr(r->hot, filter)) ||
	       (r->last && strstr(r->last, filter));
}

static int compare_view(const void *a, const void *b, void *arg)
{
	const struct top_row *x = *(const struct top_row *const *)a;
	const struct top_row *y = *(const struct top_row *const *)b;
	enum top_sort key = *(const enum top_sort *)arg;
	int c = 0;

	if (key == TOP_SORT_CPU) {
		double cx = x->cpu_user + x->cpu_sys, cy = y->cpu_user + y->cpu_sys;
		c = (cx < cy) - (cx > cy);
		if (!c)
			c = (x->samples < y->samples) - (x->samples > y->samples);
	} else if (key == TOP_SORT_MEM) {
		c = (x->rss_kb < y->rss_kb) - (x->rss_kb > y->rss_kb);
	} else {
		c = strcmp(x->name, y->name);
	}
	return c ? c : compare_key(x->pid, x->tid, y->pid, y->tid);
}

ssize_t top_model_view(struct top_model *m, enum top_sort key, const char *filter,
		       const struct top_row *const **view)
{
	size_t n = 0;

	if (grow((void **)&m->view, &m->view_cap, m->nrows + 1, sizeof(*m->view)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < m->nrows; i++)
		if (!filter || !*filter || row_matches(&m->rows[i], filter))
			m->view[n++] = &m->rows[i];
	m->sort_key = key;
	qsort_r(m->view, n, sizeof(*m->view), compare_view, &m->sort_key);
	*view = m->view;
	return (ssize_t)n;
}

static const struct sample *ref_sample(const struct top_model *m, const struct sample_ref *r)
{
	return &m->hist[r->interval].samples[r->index];
}

static const uint64_t *ref_frames(const struct top_model *m, const struct sample_ref *r)
{
	return m->hist[r->interval].frames + ref_sample(m, r)->off;
}

static int compare_stacks(const void *a, const void *b, void *arg)
{
	const struct top_model *m = arg;
	const struct sample *x = ref_sample(m, a), *y = ref_sample(m, b);

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	return memcmp(ref_frames(m, a), ref_frames(m, b), x->nframes * sizeof(uint64_t));
}

static int compare_counts(const void *a, const void *b)
{
	const struct top_stack *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

ssize_t top_model_stacks(struct top_model *m, pid_t pid, pid_t tid, unsigned nintervals,
			 const struct top_stack **stacks, uint64_t *total)
{
	size_t n = 0;

	if (nintervals > m->filled)
		nintervals = m->filled;
	for (unsigned k = 1; k <= nintervals; k++) {
		unsigned slot = (m->cur + m->nslots - k) % m->nslots;
		const struct interval *iv = &m->hist[slot];
		for (size_t i = 0; i < iv->n; i++) {
			const struct sample *s = &iv->samples[i];
			if (s->pid != pid || (!m->cfg.by_process && s->tid != tid))
				continue;
			if (grow((void **)&m->refs, &m->refs_cap, n + 1, sizeof(*m->refs)) < 0)
				return -ENOMEM;
			m->refs[n].interval = slot;
			m->refs[n++].index = (uint32_t)i;
		}
	}
	*total = n;
	qsort_r(m->refs, n, sizeof(*m->refs), compare_stacks, m);
	size_t ns = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && compare_stacks(&m->refs[i - 1], &m->refs[i], m) == 0) {
			m->stacks[ns - 1].count++;
			continue;
		}
		if (grow((void **)&m->stacks, &m->stacks_cap, ns + 1, sizeof(*m->stacks)) < 0)
			return -ENOMEM;
		const struct sample *s = ref_sample(m, &m->refs[i]);
		m->stacks[ns].count = 1;
		m->stacks[ns].pid = s->pid;
		m->stacks[ns].nframes = s->nframes;
		m->stacks[ns].frames = ref_frames(m, &m->refs[i]);
		ns++;
	}
	qsort(m->stacks, ns, sizeof(*m->stacks), compare_counts);
	*stacks = m->stacks;
	return (ssize_t)ns;
}
