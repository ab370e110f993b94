/*
 * The sample aggregator (see aggregate.h): an open-addressing hash table of
 * stack entries that live in an arena, plus a small table of threads. The
 * hot path, aggregate_add() for a stack already seen, is one thread lookup,
 * one hash of the frames and one probe sequence: no allocation, no syscall.
 */
#include "profile/aggregate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline.h"
#include "util/arena.h"

struct agg_thread {
	int32_t tid; /* 0 = empty slot */
	int32_t pid;
	uint32_t gen;	     /* for tid == pid: the process's generation */
	uint64_t gen_stacks; /* for tid == pid: entries made in this generation */
	uint64_t samples;
	char name[AGG_COMM_LEN];
};

struct aggregate {
	struct arena arena;	  /* the stack entries */
	struct agg_stack **table; /* open addressing, power-of-two size */
	size_t table_cap;
	struct agg_stack **stacks; /* insertion order */
	size_t nstacks, stacks_cap;
	struct agg_thread *threads; /* open addressing by tid */
	size_t threads_cap, nthreads;
	uint64_t samples, period;
	size_t busy_threads;
	struct timeline_writer *timeline; /* NULL unless enabled */
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static uint64_t stack_hash(uint32_t pid, uint32_t gen, uint32_t tid, const uint64_t *frames,
			   size_t n)
{
	uint64_t h = mix(((uint64_t)pid << 32 | tid) ^ ((uint64_t)gen * 0x9e3779b97f4a7c15ULL));

	for (size_t i = 0; i < n; i++)
		h = mix(h ^ frames[i]) + i;
	return h ^ n;
}

struct aggregate *aggregate_new(void)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (a)
		arena_init(&a->arena);
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
	free(a->table);
	free(a->stacks);
	free(a->threads);
	free(a);
}

static struct agg_thread *thread_slot(const struct aggregate *a, pid_t tid)
{
	if (!a->threads_cap)
		return NULL;
	size_t mask = a->threads_cap - 1;
	size_t j = mix((uint64_t)(uint32_t)tid) & mask;
	while (a->threads[j].tid && a->threads[j].tid != tid)
		j = (j + 1) & mask;
	return &a->threads[j];
}

static int threads_grow(struct aggregate *a)
{
	size_t ncap = a->threads_cap ? a->threads_cap * 2 : 64;
	struct agg_thread *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < a->threads_cap; i++) {
		if (!a->threads[i].tid)
			continue;
		size_t j = mix((uint64_t)(uint32_t)a->threads[i].tid) & (ncap - 1);
		while (n[j].tid)
			j = (j + 1) & (ncap - 1);
		n[j] = a->threads[i];
	}
	free(a->threads);
	a->threads = n;
	a->threads_cap = ncap;
	return 0;
}

/* The entry of tid, created if missing. A new thread starts in the current
 * generation of its process. */
static struct agg_thread *thread_get(struct aggregate *a, pid_t pid, pid_t tid)
{
	struct agg_thread *t = thread_slot(a, tid);

	if (t && t->tid) {
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
	if ((a->nthreads + 2) * 2 > a->threads_cap && threads_grow(a) < 0)
		return NULL;
	t = thread_slot(a, tid);
	t->tid = tid;
	t->pid = pid;
	a->nthreads++;
	if (tid == pid)
		return t;
copy_gen:;
	struct agg_thread *leader = thread_get(a, pid, pid);
	if (!leader)
		return NULL;
	uint32_t gen = leader->gen;
	t = thread_slot(a, tid); /* the table may have moved */
	t->gen = gen;
	return t;
}

static int table_grow(struct aggregate *a)
{
	size_t ncap = a->table_cap ? a->table_cap * 2 : 1024;
	struct agg_stack **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < a->table_cap; i++) {
		struct agg_stack *s = a->table[i];
		if (!s)
			continue;
		size_t j = s->hash & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = s;
	}
	free(a->table);
	a->table = n;
	a->table_cap = ncap;
	return 0;
}

static int stack_matches(const struct agg_stack *s, uint64_t hash, uint32_t pid, uint32_t gen,
			 uint32_t tid, const uint64_t *frames, size_t n)
{
	return s->hash == hash && s->pid == pid && s->tid == tid && s->gen == gen &&
	       s->nframes == n && (!n || memcmp(s->frames, frames, n * sizeof(*frames)) == 0);
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
	if (a->table_cap) {
		size_t mask = a->table_cap - 1;
		for (size_t j = hash & mask; a->table[j]; j = (j + 1) & mask) {
			s = a->table[j];
			if (stack_matches(s, hash, (uint32_t)pid, gen, (uint32_t)tid, frames, n)) {
				s->count++;
				s->period += period;
				goto counted;
			}
		}
	}

	/* A new distinct stack. */
	if ((a->nstacks + 1) * 2 > a->table_cap && table_grow(a) < 0)
		return -ENOMEM;
	if (a->nstacks == a->stacks_cap) {
		size_t ncap = a->stacks_cap ? a->stacks_cap * 2 : 1024;
		struct agg_stack **ns = realloc(a->stacks, ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		a->stacks = ns;
		a->stacks_cap = ncap;
	}
	s = arena_alloc(&a->arena, sizeof(*s) + n * sizeof(*frames));
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->hash = hash;
	s->pid = (uint32_t)pid;
	s->tid = (uint32_t)tid;
	s->gen = gen;
	s->nframes = (uint32_t)n;
	s->index = (uint32_t)a->nstacks;
	if (n)
		memcpy(s->frames, frames, n * sizeof(*frames));
	s->count = 1;
	s->period = period;
	size_t mask = a->table_cap - 1;
	size_t j = hash & mask;
	while (a->table[j])
		j = (j + 1) & mask;
	a->table[j] = s;
	a->stacks[a->nstacks++] = s;
	struct agg_thread *leader = tid == pid ? t : thread_get(a, pid, pid);
	if (leader)
		leader->gen_stacks++;
	t = thread_slot(a, tid); /* thread_get may have moved the table */
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

	return t && t->tid ? t->gen_stacks : 0;
}

uint32_t aggregate_gen(const struct aggregate *a, pid_t pid)
{
	const struct agg_thread *t = thread_slot(a, pid);

	return t && t->tid ? t->gen : 0;
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

	return t && t->tid && t->name[0] ? t->name : NULL;
}

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *st)
{
	st->samples = a->samples;
	st->period = a->period;
	st->stacks = a->nstacks;
	st->threads = a->busy_threads;
	st->bytes = a->arena.bytes + a->table_cap * sizeof(*a->table) +
		    a->stacks_cap * sizeof(*a->stacks) + a->threads_cap * sizeof(*a->threads);
}
