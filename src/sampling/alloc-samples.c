/*
 * Allocation samples: weights, and sampled allocations from their call to
 * their free (see alloc-samples.h).
 */
#include "sampling/alloc-samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perf/alloc-bpf.h"
#include "profile/aggregate.h"
#include "util/u64map.h"

/* A sampled allocation: waiting for its return (by tid), then live (by
 * address) until freed. */
struct alloc_one {
	pid_t pid, tid;
	uint64_t objects, bytes;
	size_t n;
	uint64_t frames[];
};

struct alloc_samples {
	uint64_t interval;
	struct aggregate *alloc, *inuse;
	int (*inside)(void *ctx, pid_t pid, uint64_t addr);
	void *ctx;
	struct u64map pending; /* tid -> struct alloc_one *, 0 when none */
	struct u64map live;    /* address -> struct alloc_one *, 0 once freed */
	int finished;
	struct alloc_samples_stats stats;
};

void alloc_weight(uint64_t size, uint64_t interval, uint64_t *objects, uint64_t *bytes)
{
	/* Sampled with probability p = 1 - exp(-size / interval): it stands
	 * for 1/p allocations like it. -expm1() keeps p exact for sizes far
	 * below the interval. */
	double p = size && interval ? -expm1(-(double)size / (double)interval) : 1.0;

	if (p <= 0)
		p = 1.0;
	*objects = (uint64_t)llround(1.0 / p);
	*bytes = (uint64_t)llround((double)size / p);
}

struct alloc_samples *alloc_samples_new(uint64_t interval, struct aggregate *alloc,
					struct aggregate *inuse,
					int (*inside)(void *ctx, pid_t pid, uint64_t addr),
					void *ctx)
{
	struct alloc_samples *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	as->interval = interval;
	as->alloc = alloc;
	as->inuse = inuse;
	as->inside = inside;
	as->ctx = ctx;
	u64map_init(&as->pending);
	u64map_init(&as->live);
	return as;
}

static void free_value(void *ctx, uint64_t key, uint64_t val)
{
	(void)ctx;
	(void)key;
	free((void *)(uintptr_t)val);
}

void alloc_samples_free(struct alloc_samples *as)
{
	if (!as)
		return;
	u64map_each(&as->pending, free_value, NULL);
	u64map_each(&as->live, free_value, NULL);
	u64map_release(&as->pending);
	u64map_release(&as->live);
	free(as);
}

/* Takes the entry of key out of m (NULL if none). */
static struct alloc_one *take(struct u64map *m, uint64_t key)
{
	uint64_t v = 0;

	if (!u64map_get(m, key, &v) || !v)
		return NULL;
	u64map_put(m, key, 0); /* cannot fail: the key is there */
	return (struct alloc_one *)(uintptr_t)v;
}

/* Whether frames[i] is a PERF_CONTEXT_* marker rather than an address. */
static int is_marker(uint64_t frame)
{
	return frame >= (uint64_t)-4095;
}

static int add_sample(struct alloc_samples *as, pid_t pid, pid_t tid, uint64_t size,
		      uint64_t caller, uint64_t stacked, const uint64_t *frames, size_t n)
{
	struct alloc_one *old = take(&as->pending, (uint64_t)tid);

	if (old) {
		as->stats.unmatched++; /* its return never came */
		as->stats.unfollowed++;
		free(old);
	}
	if (caller && as->inside && as->inside(as->ctx, pid, caller - 1)) {
		as->stats.nested++;
		return 0;
	}
	/* The leaf is the allocator's first instruction; the caller follows
	 * it unless a frame pointer walk missed it, or the unwinder read a
	 * uretprobe's trampoline in its place (stacked), which the caller
	 * replaces. */
	size_t leaf = 0;
	while (leaf < n && is_marker(frames[leaf]))
		leaf++;
	int put_back = caller && leaf < n && (leaf + 1 == n || frames[leaf + 1] != caller);
	int replace = put_back && stacked && leaf + 1 < n && frames[leaf + 1] == stacked;
	put_back &= !replace;
	struct alloc_one *one = malloc(sizeof(*one) + (n + 1) * sizeof(*frames));
	if (!one)
		return -ENOMEM;
	one->pid = pid;
	one->tid = tid;
	one->n = n + (size_t)put_back;
	if (put_back) {
		memcpy(one->frames, frames, (leaf + 1) * sizeof(*frames));
		one->frames[leaf + 1] = caller;
		memcpy(one->frames + leaf + 2, frames + leaf + 1, (n - leaf - 1) * sizeof(*frames));
	} else {
		memcpy(one->frames, frames, n * sizeof(*frames));
		if (replace)
			one->frames[leaf + 1] = caller;
	}
	frames = one->frames;
	n = one->n;
	alloc_weight(size, as->interval, &one->objects, &one->bytes);
	int err =
	    aggregate_add_weighted(as->alloc, pid, tid, frames, n, one->objects, one->bytes, -1);
	if (!err)
		err = u64map_put(&as->pending, (uint64_t)tid, (uint64_t)(uintptr_t)one);
	if (err) {
		free(one);
		return err;
	}
	as->stats.samples++;
	as->stats.objects += one->objects;
	as->stats.bytes += one->bytes;
	return 0;
}

int alloc_samples_add(struct alloc_samples *as, pid_t pid, pid_t tid, const void *raw,
		      size_t raw_size, const uint64_t *frames, size_t n)
{
	struct alloc_raw r;

	if (raw_size < sizeof(r))
		return -EBADMSG;
	memcpy(&r, raw, sizeof(r));
	switch (r.event) {
	case ALLOC_EV_SAMPLE:
		return add_sample(as, pid, tid, r.value, r.caller, r.stacked, frames, n);
	case ALLOC_EV_RETURN: {
		struct alloc_one *one = take(&as->pending, (uint64_t)tid);
		if (!one) {
			as->stats.unmatched++;
			return 0;
		}
		if (!r.value) { /* the allocation failed: nothing lives */
			as->stats.unfollowed++;
			free(one);
			return 0;
		}
		/* The allocator gave the address again: the block there was
		 * freed, though its free was not seen. */
		struct alloc_one *gone = take(&as->live, r.value);
		if (gone) {
			as->stats.frees++;
			free(gone);
		}
		int err = u64map_put(&as->live, r.value, (uint64_t)(uintptr_t)one);
		if (err) {
			as->stats.unfollowed++;
			free(one);
		}
		return err;
	}
	case ALLOC_EV_FREE: {
		struct alloc_one *one = take(&as->live, r.value);
		if (one) {
			as->stats.frees++;
			free(one);
		}
		return 0;
	}
	default:
		return -EBADMSG;
	}
}

static void add_live(void *ctx, uint64_t key, uint64_t val)
{
	struct alloc_samples *as = ctx;
	const struct alloc_one *one = (const struct alloc_one *)(uintptr_t)val;

	(void)key;
	if (!one)
		return;
	as->stats.live++;
	if (aggregate_add_weighted(as->inuse, one->pid, one->tid, one->frames, one->n, one->objects,
				   one->bytes, -1) < 0)
		as->finished = -ENOMEM;
}

/* A sample whose call had not returned as the recording ended (or whose
 * return was lost). */
static void count_pending(void *ctx, uint64_t key, uint64_t val)
{
	struct alloc_samples *as = ctx;

	(void)key;
	if (val)
		as->stats.unfollowed++;
}

int alloc_samples_finish(struct alloc_samples *as)
{
	if (as->finished)
		return as->finished < 0 ? as->finished : 0;
	as->finished = 1;
	u64map_each(&as->pending, count_pending, as);
	u64map_each(&as->live, add_live, as);
	return as->finished < 0 ? as->finished : 0;
}

struct each_live {
	void (*fn)(void *ctx, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		   uint64_t objects, uint64_t bytes);
	void *ctx;
};

static void call_live(void *ctx, uint64_t key, uint64_t val)
{
	const struct each_live *e = ctx;
	const struct alloc_one *one = (const struct alloc_one *)(uintptr_t)val;

	(void)key;
	if (one)
		e->fn(e->ctx, one->pid, one->tid, one->frames, one->n, one->objects, one->bytes);
}

void alloc_samples_each_live(const struct alloc_samples *as,
			     void (*fn)(void *ctx, pid_t pid, pid_t tid, const uint64_t *frames,
					size_t n, uint64_t objects, uint64_t bytes),
			     void *ctx)
{
	struct each_live e = {fn, ctx};

	u64map_each(&as->live, call_live, &e);
}

void alloc_samples_get_stats(const struct alloc_samples *as, struct alloc_samples_stats *st)
{
	*st = as->stats;
}
