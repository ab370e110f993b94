/*
 * Off-CPU time (see offcpu.h): one entry per thread seen, found by tid,
 * holding the stack of its last switch out until it comes back. The
 * entries keep their frame buffers, so a thread that blocks again and
 * again allocates once.
 */
#include "sampling/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "profile/offcpu-reason.h"
#include "util/array.h"
#include "util/u64map.h"

/* T_FRESH: attached, nothing seen yet; T_SEEN: on a CPU, or off with no
 * stack (created meanwhile, or it exited); T_PENDING: off, stack known. */
enum { T_FRESH, T_SEEN, T_PENDING };

struct off_thread {
	pid_t pid, tid;
	int state;
	int preempt;
	uint64_t out_ns;
	uint64_t *frames; /* the marker, then the stack */
	size_t n, cap;
};

struct offcpu {
	struct aggregate *agg;
	int64_t start_ns;
	struct u64map by_tid; /* tid -> index in threads */
	struct off_thread *threads;
	size_t nthreads, threads_cap;
	struct offcpu_stats stats;
};

struct offcpu *offcpu_new(struct aggregate *agg)
{
	struct offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->agg = agg;
	u64map_init(&o->by_tid);
	return o;
}

void offcpu_set_start(struct offcpu *o, int64_t start_ns)
{
	o->start_ns = start_ns;
}

void offcpu_free(struct offcpu *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nthreads; i++)
		free(o->threads[i].frames);
	free(o->threads);
	u64map_release(&o->by_tid);
	free(o);
}

static struct off_thread *find(struct offcpu *o, pid_t tid)
{
	uint64_t i;

	return u64map_get(&o->by_tid, (uint64_t)tid, &i) ? &o->threads[i] : NULL;
}

/* The entry of tid, made (fresh) if it has none. */
static struct off_thread *find_or_add(struct offcpu *o, pid_t pid, pid_t tid)
{
	struct off_thread *t = find(o, tid);

	if (t)
		return t;
	struct off_thread *n =
	    array_reserve(o->threads, &o->threads_cap, o->nthreads + 1, sizeof(*n));
	if (!n)
		return NULL;
	o->threads = n;
	if (u64map_put(&o->by_tid, (uint64_t)tid, o->nthreads) < 0)
		return NULL;
	t = &o->threads[o->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->state = T_FRESH;
	return t;
}

static void add(struct offcpu *o, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		uint64_t from_ns, uint64_t to_ns)
{
	/* Counted from the start (a switch seen as the events came on, before
	 * it), and nothing of a wait over before it. */
	if ((int64_t)from_ns < o->start_ns)
		from_ns = (uint64_t)o->start_ns;
	if (to_ns <= from_ns)
		return;
	uint64_t ns = to_ns - from_ns;
	int64_t when = (int64_t)from_ns - o->start_ns;

	if (aggregate_add_at(o->agg, pid, tid, frames, n, ns, when < 0 ? 0 : when) < 0) {
		o->stats.dropped++;
		return;
	}
	o->stats.switches++;
	o->stats.ns += ns;
}

int offcpu_waiting(struct offcpu *o, pid_t pid, pid_t tid, const uint64_t *frames, size_t n)
{
	return offcpu_out(o, pid, tid, (uint64_t)o->start_ns, frames, n);
}

int offcpu_out(struct offcpu *o, pid_t pid, pid_t tid, uint64_t time_ns, const uint64_t *frames,
	       size_t n)
{
	struct off_thread *t = find_or_add(o, pid, tid);

	if (!t)
		return -ENOMEM;
	uint64_t *f = array_reserve(t->frames, &t->cap, n + 1, sizeof(*f));
	if (!f) {
		t->state = T_SEEN;
		return -ENOMEM;
	}
	t->frames = f;
	f[0] = OFFCPU_MARK_WAIT;
	memcpy(f + 1, frames, n * sizeof(*f));
	t->n = n + 1;
	t->pid = pid;
	t->out_ns = time_ns;
	t->preempt = 0;
	t->state = T_PENDING;
	return 0;
}

void offcpu_preempted(struct offcpu *o, pid_t tid)
{
	struct off_thread *t = find(o, tid);

	if (t && t->state == T_PENDING)
		t->frames[0] = OFFCPU_MARK_RUNNABLE;
}

/* Off its CPU since before the start until to_ns: where, nobody knows. */
static void add_lead_in(struct offcpu *o, struct off_thread *t, uint64_t to_ns)
{
	static const uint64_t before[] = {OFFCPU_MARK_BEFORE};

	add(o, t->pid, t->tid, before, 1, (uint64_t)o->start_ns, to_ns);
	t->state = T_SEEN;
}

int offcpu_attached(struct offcpu *o, pid_t pid, pid_t tid)
{
	return find_or_add(o, pid, tid) ? 0 : -ENOMEM;
}

void offcpu_in(struct offcpu *o, pid_t pid, pid_t tid, uint64_t time_ns)
{
	struct off_thread *t = find_or_add(o, pid, tid);

	if (!t) {
		o->stats.dropped++;
		return;
	}
	if (t->state == T_FRESH)
		add_lead_in(o, t, time_ns);
	if (t->state != T_PENDING)
		return;
	add(o, t->pid, tid, t->frames, t->n, t->out_ns, time_ns);
	t->state = T_SEEN;
}

void offcpu_new_thread(struct offcpu *o, pid_t pid, pid_t tid)
{
	struct off_thread *t = find_or_add(o, pid, tid);

	if (t) {
		t->pid = pid;
		t->state = T_SEEN;
	} else {
		o->stats.dropped++;
	}
}

void offcpu_exit(struct offcpu *o, pid_t tid)
{
	struct off_thread *t = find(o, tid);

	if (t)
		t->state = T_SEEN;
}

void offcpu_finish(struct offcpu *o, uint64_t end_ns)
{
	for (size_t i = 0; i < o->nthreads; i++) {
		struct off_thread *t = &o->threads[i];
		if (t->state == T_FRESH)
			add_lead_in(o, t, end_ns);
		if (t->state != T_PENDING)
			continue;
		add(o, t->pid, t->tid, t->frames, t->n, t->out_ns, end_ns);
		t->state = T_SEEN;
	}
}

void offcpu_get_stats(const struct offcpu *o, struct offcpu_stats *st)
{
	*st = o->stats;
}
