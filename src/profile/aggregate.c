/*
 * The sample aggregator (see aggregate.h): stack entries that live in an
 * arena, found through the hash table, plus an array of threads found
 * through a u64map by tid. The
 * hot path, aggregate_add() for a stack already seen, is one thread lookup,
 * one hash of the frames and one probe sequence: no allocation, no syscall.
 */
#include "profile/aggregate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline.h"
#include "util/arena.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/u64map.h"

struct agg_thread {
	int32_t tid;
	int32_t pid;
	uint32_t gen;	     /* for tid == pid: the process's generation */
	uint64_t gen_stacks; /* for tid == pid: entries made in this generation */
	uint64_t samples;
	uint64_t last_samples; /* in the window aggregate_clear() ended */
	char name[AGG_COMM_LEN];
};

struct aggregate {
	struct arena arena;	   /* the stack entries */
	struct htab table;	   /* stack hash -> index in stacks */
	struct agg_stack **stacks; /* insertion order */
	size_t nstacks, stacks_cap;
	struct agg_thread *threads; /* in order of appearance */
	size_t threads_cap, nthreads;
	struct u64map thread_index; /* tid -> index in threads */
	uint64_t samples, period;
	size_t busy_threads;
	struct timeline_writer *timeline; /* NULL unless enabled */
};

/* FNV-1a over whole 64-bit words: the table mixes the result again before
 * it picks a slot, so high bits of a frame count too. */
static uint64_t stack_hash(uint32_t pid, uint32_t gen, uint32_t tid, const uint64_t *frames,
			   size_t n)
{
	uint64_t h = hash_fnv1a_value(HASH_FNV1A_INIT, (uint64_t)pid << 32 | tid);

	h = hash_fnv1a_value(h, gen);
	for (size_t i = 0; i < n; i++)
		h = hash_fnv1a_value(h, frames[i]);
	return hash_fnv1a_value(h, n);
}

struct aggregate *aggregate_new(void)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (a) {
		arena_init(&a->arena);
		htab_init(&a->table);
		u64map_init(&a->thread_index);
	}
	return a;
}

void aggregate_free(struct aggregate *a)
{
	if (!a)
		return;
	arena_release(&a->arena);
	if (a->timeline)
		timeline_writer_release(a->timeline);
	free(a->timeline);
	htab_release(&a->table);
	u64map_release(&a->thread_index);
	free(a->stacks);
	free(a->threads);
	free(a);
}

void aggregate_clear(struct aggregate *a)
{
	arena_release(&a->arena);
	arena_init(&a->arena);
	htab_release(&a->table);
	htab_init(&a->table);
	a->nstacks = 0;
	a->samples = a->period = 0;
	a->busy_threads = 0;
	for (size_t i = 0; i < a->nthreads; i++) {
		a->threads[i].last_samples = a->threads[i].samples;
		a->threads[i].samples = a->threads[i].gen_stacks = 0;
	}
}

size_t aggregate_drop_threads(struct aggregate *a, int (*gone)(void *arg, pid_t pid, pid_t tid),
			      void *arg)
{
	struct u64map index;
	size_t kept = 0, dropped = 0;
	unsigned char *drop = calloc(a->nthreads ? a->nthreads : 1, 1);

	if (!drop)
		return 0;
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct agg_thread *t = &a->threads[i];
		drop[i] = !t->last_samples && !t->samples && gone(arg, t->pid, t->tid);
		dropped += drop[i];
	}
	/* The index by tid is made anew only when some go (it has no
	 * removal), first, so that a failure leaves every thread. */
	u64map_init(&index);
	for (size_t i = 0; dropped && i < a->nthreads; i++)
		if (!drop[i] && u64map_put(&index, (uint64_t)(uint32_t)a->threads[i].tid, kept++) < 0)
			dropped = 0;
	if (dropped) {
		kept = 0;
		for (size_t i = 0; i < a->nthreads; i++)
			if (!drop[i])
				a->threads[kept++] = a->threads[i];
		a->nthreads = kept;
		u64map_release(&a->thread_index);
		a->thread_index = index;
	} else {
		u64map_release(&index);
	}
	free(drop);
	return dropped;
}

/* The entry of tid, or NULL: valid until the next thread_get(). */
static struct agg_thread *thread_slot(const struct aggregate *a, pid_t tid)
{
	uint64_t i;

	if (!u64map_get(&a->thread_index, (uint64_t)(uint32_t)tid, &i))
		return NULL;
	return &a->threads[i];
}

/* The entry of tid, created if missing. A new thread starts in the current
 * generation of its process. */
static struct agg_thread *thread_get(struct aggregate *a, pid_t pid, pid_t tid)
{
	struct agg_thread *t = thread_slot(a, tid);

	if (t) {
		if (t->pid == pid)
			return t;
		/* The tid was reused by another process: a new thread. */
		t->pid = pid;
		t->samples = 0;
		t->name[0] = 0;
		if (tid == pid) {
			/* A new process under an old pid: new addresses. */
			t->gen++;
			t->gen_stacks = 0;
			return t;
		}
		goto copy_gen;
	}
	struct agg_thread *grown =
	    array_reserve(a->threads, &a->threads_cap, a->nthreads + 1, sizeof(*a->threads));
	if (!grown)
		return NULL;
	a->threads = grown;
	if (u64map_put(&a->thread_index, (uint64_t)(uint32_t)tid, a->nthreads) < 0)
		return NULL;
	t = &a->threads[a->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	if (tid == pid)
		return t;
copy_gen:;
	struct agg_thread *leader = thread_get(a, pid, pid);
	if (!leader)
		return NULL;
	uint32_t gen = leader->gen;
	t = thread_slot(a, tid); /* the array may have moved */
	t->gen = gen;
	return t;
}

/* The stack being looked up, for the table's equality callback. */
struct wanted {
	const struct aggregate *a;
	uint32_t pid, gen, tid;
	const uint64_t *frames;
	size_t n;
};

static int stack_matches(const void *ctx, uint64_t index)
{
	const struct wanted *w = ctx;
	const struct agg_stack *s = w->a->stacks[index];

	return s->pid == w->pid && s->tid == w->tid && s->gen == w->gen && s->nframes == w->n &&
	       (!w->n || memcmp(s->frames, w->frames, w->n * sizeof(*w->frames)) == 0);
}

void aggregate_enable_timeline(struct aggregate *a, size_t max_bytes)
{
	if (a->timeline)
		return;
	a->timeline = malloc(sizeof(*a->timeline));
	if (a->timeline)
		timeline_writer_init(a->timeline, max_bytes);
}

struct timeline_writer *aggregate_timeline(struct aggregate *a)
{
	return a->timeline;
}

int aggregate_add(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		  uint64_t period)
{
	return aggregate_add_at(a, pid, tid, frames, n, period, -1);
}

int aggregate_add_at(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		     uint64_t period, int64_t time_ns)
{
	return aggregate_add_weighted(a, pid, tid, frames, n, 1, period, time_ns);
}

int aggregate_add_weighted(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames,
			   size_t n, uint64_t count, uint64_t period, int64_t time_ns)
{
	struct agg_stack *s;

	struct agg_thread *t = thread_get(a, pid, tid);

	if (!t)
		return -ENOMEM;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	/* A process's generation lives in its leader's entry; other threads
	 * copied it when they appeared, and exec leaves only the leader. */
	uint32_t gen = t->gen;
	uint64_t hash = stack_hash((uint32_t)pid, gen, (uint32_t)tid, frames, n);
	struct wanted w = {a, (uint32_t)pid, gen, (uint32_t)tid, frames, n};
	struct htab_slot *hit = htab_find(&a->table, hash, stack_matches, &w);
	if (hit) {
		s = a->stacks[hit->val];
		s->count += count;
		s->period += period;
		goto counted;
	}

	/* A new distinct stack. */
	struct agg_stack **ns =
	    array_reserve(a->stacks, &a->stacks_cap, a->nstacks + 1, sizeof(*a->stacks));
	if (!ns)
		return -ENOMEM;
	a->stacks = ns;
	s = arena_alloc(&a->arena, sizeof(*s) + n * sizeof(*frames));
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->pid = (uint32_t)pid;
	s->tid = (uint32_t)tid;
	s->gen = gen;
	s->nframes = (uint32_t)n;
	s->index = (uint32_t)a->nstacks;
	if (n)
		memcpy(s->frames, frames, n * sizeof(*frames));
	s->count = count;
	s->period = period;
	if (!htab_add(&a->table, hash, a->nstacks))
		return -ENOMEM;
	a->stacks[a->nstacks++] = s;
	struct agg_thread *leader = tid == pid ? t : thread_get(a, pid, pid);
	if (leader)
		leader->gen_stacks++;
	t = thread_slot(a, tid); /* thread_get may have moved the array */
counted:
	/* A full timeline drops the event, never the sample. */
	if (a->timeline && time_ns >= 0)
		timeline_writer_add(a->timeline, s->index, time_ns, (int64_t)period);
	if (!t->samples++)
		a->busy_threads++;
	a->samples++;
	a->period += period;
	return 0;
}

int aggregate_exec(struct aggregate *a, pid_t pid)
{
	struct agg_thread *t = thread_get(a, pid, pid);

	if (!t)
		return -ENOMEM;
	t->gen++;
	t->gen_stacks = 0;
	return 0;
}

uint64_t aggregate_gen_stacks(const struct aggregate *a, pid_t pid)
{
	const struct agg_thread *t = thread_slot(a, pid);

	return t ? t->gen_stacks : 0;
}

uint32_t aggregate_gen(const struct aggregate *a, pid_t pid)
{
	const struct agg_thread *t = thread_slot(a, pid);

	return t ? t->gen : 0;
}

size_t aggregate_nstacks(const struct aggregate *a)
{
	return a->nstacks;
}

struct agg_stack *aggregate_stack(struct aggregate *a, size_t i)
{
	return i < a->nstacks ? a->stacks[i] : NULL;
}

int aggregate_set_thread(struct aggregate *a, pid_t pid, pid_t tid, const char *name)
{
	char copy[AGG_COMM_LEN];
	size_t len = name ? strnlen(name, AGG_COMM_LEN - 1) : 0;

	/* name may point into the table (another thread's name), which
	 * thread_get() can move. */
	if (name)
		memcpy(copy, name, len);
	struct agg_thread *t = thread_get(a, pid, tid);
	if (!t)
		return -ENOMEM;
	if (name) {
		memcpy(t->name, copy, len);
		t->name[len] = 0;
	}
	return 0;
}

const char *aggregate_thread_name(const struct aggregate *a, pid_t tid)
{
	const struct agg_thread *t = thread_slot(a, tid);

	return t && t->name[0] ? t->name : NULL;
}

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *st)
{
	st->samples = a->samples;
	st->period = a->period;
	st->stacks = a->nstacks;
	st->threads = a->busy_threads;
	st->bytes = a->arena.bytes + a->table.cap * sizeof(*a->table.slots) +
		    a->stacks_cap * sizeof(*a->stacks) + a->threads_cap * sizeof(*a->threads) +
		    a->thread_index.table.cap * sizeof(*a->thread_index.table.slots);
}
