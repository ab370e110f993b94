/*
 * What stays in use, by stack, over time (see alloc-growth.h).
 */
#include "sampling/alloc-growth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "profile/aggregate.h"
#include "sampling/alloc-samples.h"
#include "util/array.h"
#include "util/u64map.h"

/* A stack seen in use, and its objects and bytes at each snapshot. */
struct stack_series {
	pid_t pid, tid;
	uint64_t *frames;
	size_t n;
	uint64_t objects[GROWTH_POINTS], bytes[GROWTH_POINTS];
	uint32_t blocks[GROWTH_POINTS]; /* sampled blocks in use */
};

struct alloc_growth {
	uint64_t every_ns, next_ns;
	struct aggregate *growing;
	struct stack_series **v;
	size_t nv, cap;
	struct u64map index; /* stack key -> its index in v, plus 1 */
	size_t points;	     /* snapshots taken */
	int err;	     /* -ENOMEM in the middle of a snapshot */
};

struct alloc_growth *alloc_growth_new(uint64_t every_ns, struct aggregate *growing)
{
	struct alloc_growth *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->every_ns = every_ns ? every_ns : 1;
	g->growing = growing;
	u64map_init(&g->index);
	return g;
}

void alloc_growth_free(struct alloc_growth *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nv; i++) {
		free(g->v[i]->frames);
		free(g->v[i]);
	}
	free(g->v);
	u64map_release(&g->index);
	free(g);
}

/* FNV-1a over the process and the frames: a stack's key. */
static uint64_t stack_key(pid_t pid, const uint64_t *frames, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uint32_t)pid;

	for (size_t i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

static struct stack_series *series_of(struct alloc_growth *g, pid_t pid, pid_t tid,
				      const uint64_t *frames, size_t n)
{
	uint64_t key = stack_key(pid, frames, n), at = 0;

	if (u64map_get(&g->index, key, &at) && at)
		return g->v[at - 1];
	struct stack_series **v = array_reserve(g->v, &g->cap, g->nv + 1, sizeof(*g->v));
	if (!v)
		return NULL;
	g->v = v;
	struct stack_series *s = calloc(1, sizeof(*s));
	if (!s || !(s->frames = malloc((n ? n : 1) * sizeof(*frames)))) {
		free(s);
		return NULL;
	}
	memcpy(s->frames, frames, n * sizeof(*frames));
	s->n = n;
	s->pid = pid;
	s->tid = tid;
	if (u64map_put(&g->index, key, g->nv + 1) < 0) {
		free(s->frames);
		free(s);
		return NULL;
	}
	g->v[g->nv++] = s;
	return s;
}

static void add_live(void *ctx, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		     uint64_t objects, uint64_t bytes)
{
	struct alloc_growth *g = ctx;
	struct stack_series *s = g->err ? NULL : series_of(g, pid, tid, frames, n);

	if (!s) {
		g->err = -ENOMEM;
		return;
	}
	s->objects[g->points] += objects;
	s->bytes[g->points] += bytes;
	s->blocks[g->points]++;
}

/* Every other snapshot dropped (the first and the last kept), the
 * interval doubled. */
static void thin(struct alloc_growth *g)
{
	size_t k = 0;

	for (size_t i = 0; i < g->points; i += 2, k++)
		for (size_t j = 0; j < g->nv; j++) {
			g->v[j]->objects[k] = g->v[j]->objects[i];
			g->v[j]->bytes[k] = g->v[j]->bytes[i];
			g->v[j]->blocks[k] = g->v[j]->blocks[i];
		}
	if (g->points % 2 == 0)
		for (size_t j = 0; j < g->nv; j++) {
			g->v[j]->objects[k - 1] = g->v[j]->objects[g->points - 1];
			g->v[j]->bytes[k - 1] = g->v[j]->bytes[g->points - 1];
			g->v[j]->blocks[k - 1] = g->v[j]->blocks[g->points - 1];
		}
	for (size_t j = 0; j < g->nv; j++) {
		memset(g->v[j]->objects + k, 0, (GROWTH_POINTS - k) * sizeof(uint64_t));
		memset(g->v[j]->bytes + k, 0, (GROWTH_POINTS - k) * sizeof(uint64_t));
		memset(g->v[j]->blocks + k, 0, (GROWTH_POINTS - k) * sizeof(uint32_t));
	}
	g->points = k;
	g->every_ns *= 2;
}

static int snapshot(struct alloc_growth *g, const struct alloc_samples *as)
{
	if (g->points == GROWTH_POINTS)
		thin(g);
	alloc_samples_each_live(as, add_live, g);
	g->points++;
	return g->err;
}

int alloc_growth_tick(struct alloc_growth *g, const struct alloc_samples *as, uint64_t now_ns)
{
	if (g->points && now_ns < g->next_ns)
		return 0;
	g->next_ns = now_ns + g->every_ns;
	return snapshot(g, as);
}

/*
 * Whether the sampled blocks in use grew from first to last by more than
 * chance gives a stack that keeps a steady number in use (a full cache
 * whose blocks are replaced): each count is about Poisson, so their
 * difference varies by sqrt(first + last); three times that is asked.
 * Without it, a steady stack's count, up and down at random, rose at
 * every snapshot of a short recording once in twenty runs or so.
 */
static int beyond_noise(uint32_t first, uint32_t last)
{
	if (last <= first)
		return 0;
	double d = (double)(last - first);
	return d * d > 9.0 * ((double)first + (double)last);
}

int alloc_growth_finish(struct alloc_growth *g, const struct alloc_samples *as)
{
	int n = 0, err = snapshot(g, as);

	if (err)
		return err;
	for (size_t j = 0; j < g->nv && g->points >= 3; j++) {
		const struct stack_series *s = g->v[j];
		size_t last = g->points - 1, ups = 0;
		int down = 0;
		for (size_t i = 1; i <= last && !down; i++) {
			down = s->bytes[i] < s->bytes[i - 1];
			ups += s->bytes[i] > s->bytes[i - 1];
		}
		/* Up twice at least: a block caught in flight by one snapshot
		 * (the last: its free came after recce let go) is no growth. */
		if (down || ups < 2 || !beyond_noise(s->blocks[0], s->blocks[last]))
			continue;
		uint64_t objects =
		    s->objects[last] > s->objects[0] ? s->objects[last] - s->objects[0] : 0;
		if (aggregate_add_weighted(g->growing, s->pid, s->tid, s->frames, s->n, objects,
					   s->bytes[last] - s->bytes[0], -1) < 0)
			return -ENOMEM;
		n++;
	}
	return n;
}

void alloc_growth_span(const struct alloc_growth *g, size_t *snapshots, uint64_t *every_ns)
{
	*snapshots = g->points;
	*every_ns = g->every_ns;
}
