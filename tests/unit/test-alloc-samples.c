/*
 * Unit tests of allocation samples: the weight of a sample (what a Poisson
 * sampler of one point per interval bytes implies), a sample and its
 * return making a live allocation that a free ends, what is live at the
 * end going to the in-use aggregate, the caller put back where a frame
 * pointer walk from a function's entry missed it or in place of a return
 * probe's trampoline the walk read there, a sample of the
 * allocator calling itself left out, and records that are not ones.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perf/alloc-bpf.h"
#include "profile/aggregate.h"
#include "sampling/alloc-growth.h"
#include "sampling/alloc-samples.h"

#define USER	((uint64_t)-512) /* PERF_CONTEXT_USER */
#define MALLOC	0x7000
#define CALLER	0x1234
#define GRANDPA 0x5678
#define OTHER	0x9abc

static void test_weight(void **state)
{
	uint64_t objects, bytes;

	(void)state;
	/* Far below the interval: 1/p is about interval/size. */
	alloc_weight(64, 512 * 1024, &objects, &bytes);
	assert_true(objects >= 8192 && objects <= 8193);
	assert_true(bytes >= 524288 && bytes <= 524352);
	/* Far above: sampled almost surely, it stands for itself. */
	alloc_weight(64 << 20, 512 * 1024, &objects, &bytes);
	assert_int_equal(objects, 1);
	assert_int_equal(bytes, 64 << 20);
	/* At the interval: p = 1 - 1/e. */
	alloc_weight(1000, 1000, &objects, &bytes);
	assert_int_equal(bytes, (uint64_t)llround(1000 / (1 - exp(-1))));
	assert_int_equal(objects, 2);
}

static int send(struct alloc_samples *as, uint32_t tid, uint64_t ev, uint64_t value,
		uint64_t caller, const uint64_t *frames, size_t n)
{
	struct alloc_raw r = {ev, value, caller, 0};

	return alloc_samples_add(as, 10, (pid_t)tid, &r, sizeof(r), frames, n);
}

static void test_live_and_freed(void **state)
{
	struct aggregate *alloc = aggregate_new(), *inuse = aggregate_new();
	struct alloc_samples *as = alloc_samples_new(1000, alloc, inuse, NULL, NULL);
	/* A frame pointer walk from malloc's first instruction: the caller
	 * is missing, its caller is there. */
	uint64_t frames[] = {USER, MALLOC, GRANDPA};
	struct alloc_samples_stats st;

	(void)state;
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_RETURN, 0xa000, 0, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_RETURN, 0xb000, 0, frames, 3), 0);
	assert_int_equal(send(as, 12, ALLOC_EV_FREE, 0xa000, 0, frames, 3), 0);
	assert_int_equal(send(as, 12, ALLOC_EV_FREE, 0xc000, 0, frames, 3), 0); /* never sampled */
	/* A failed allocation lives nowhere. */
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_RETURN, 0, 0, frames, 3), 0);
	/* 0xb000 given again: its block was freed, the free not seen. */
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_RETURN, 0xb000, 0, frames, 3), 0);
	/* A call still running as the recording ends. */
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
	assert_int_equal(alloc_samples_finish(as), 0);
	assert_int_equal(alloc_samples_finish(as), 0); /* once */

	uint64_t objects, bytes;
	alloc_weight(1000, 1000, &objects, &bytes);
	assert_int_equal(aggregate_nstacks(alloc), 1);
	const struct agg_stack *s = aggregate_stack(alloc, 0);
	assert_int_equal(s->count, 5 * objects);
	assert_int_equal(s->period, 5 * bytes);
	assert_int_equal(s->nframes, 4);
	assert_int_equal(s->frames[1], MALLOC);
	assert_int_equal(s->frames[2], CALLER); /* put back */
	assert_int_equal(s->frames[3], GRANDPA);
	assert_int_equal(aggregate_nstacks(inuse), 1);
	s = aggregate_stack(inuse, 0);
	assert_int_equal(s->count, objects); /* the second 0xb000 only */
	assert_int_equal(s->period, bytes);
	assert_int_equal(s->frames[2], CALLER);

	alloc_samples_get_stats(as, &st);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.frees, 2);
	assert_int_equal(st.live, 1);
	assert_int_equal(st.unfollowed, 2); /* the failed one, the one running */
	assert_int_equal(st.unmatched, 0);
	alloc_samples_free(as);
	aggregate_free(alloc);
	aggregate_free(inuse);
}

/* An unwound stack already has the caller after the leaf. */
static void test_caller_present(void **state)
{
	struct aggregate *alloc = aggregate_new(), *inuse = aggregate_new();
	struct alloc_samples *as = alloc_samples_new(1000, alloc, inuse, NULL, NULL);
	uint64_t frames[] = {USER, MALLOC, CALLER, GRANDPA};

	(void)state;
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 10, CALLER, frames, 4), 0);
	assert_int_equal(aggregate_stack(alloc, 0)->nframes, 4);
	/* A second sample before the first's return: that one is unmatched. */
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 10, CALLER, frames, 4), 0);
	/* A return with no sample before it, on another thread. */
	assert_int_equal(send(as, 13, ALLOC_EV_RETURN, 0xa000, 0, frames, 4), 0);
	struct alloc_samples_stats st;
	alloc_samples_get_stats(as, &st);
	assert_int_equal(st.unmatched, 2);
	assert_int_equal(st.unfollowed, 1); /* the sample: the return is no sample */
	alloc_samples_free(as); /* frees what is still pending */
	aggregate_free(alloc);
	aggregate_free(inuse);
}

/* A call reached by a tail call from a probed one (glibc's realloc(NULL)
 * going on to malloc): where its return address is, the unwinder read
 * the return probe's trampoline, which the program says it found; the
 * caller takes its place, and nothing is added. */
static void test_trampoline(void **state)
{
	struct aggregate *alloc = aggregate_new(), *inuse = aggregate_new();
	struct alloc_samples *as = alloc_samples_new(1000, alloc, inuse, NULL, NULL);
	const uint64_t tramp = 0x7fffffffe000ull;
	uint64_t frames[] = {USER, MALLOC, tramp, GRANDPA};
	struct alloc_raw r = {ALLOC_EV_SAMPLE, 10, CALLER, tramp};

	(void)state;
	assert_int_equal(alloc_samples_add(as, 10, 11, &r, sizeof(r), frames, 4), 0);
	const struct agg_stack *s = aggregate_stack(alloc, 0);
	assert_int_equal(s->nframes, 4);
	assert_int_equal(s->frames[1], MALLOC);
	assert_int_equal(s->frames[2], CALLER);
	assert_int_equal(s->frames[3], GRANDPA);
	assert_int_equal(frames[2], tramp); /* the record's frames are left as they were */
	alloc_samples_free(as);
	aggregate_free(alloc);
	aggregate_free(inuse);
}

static int inside_alloc(void *ctx, pid_t pid, uint64_t addr)
{
	(void)ctx;
	(void)pid;
	return addr >= 0x9000 && addr < 0x9100;
}

static void test_nested_and_bad(void **state)
{
	struct aggregate *alloc = aggregate_new(), *inuse = aggregate_new();
	struct alloc_samples *as = alloc_samples_new(1000, alloc, inuse, inside_alloc, NULL);
	uint64_t frames[] = {USER, MALLOC, 0x9050};

	(void)state;
	/* malloc called from inside realloc: left out, and so is its return. */
	assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 100, 0x9051, frames, 3), 0);
	assert_int_equal(send(as, 11, ALLOC_EV_RETURN, 0xa000, 0, frames, 3), 0);
	assert_int_equal(aggregate_nstacks(alloc), 0);
	struct alloc_samples_stats st;
	alloc_samples_get_stats(as, &st);
	assert_int_equal(st.nested, 1);
	assert_int_equal(st.samples, 0);

	struct alloc_raw r = {99, 0, 0, 0};
	assert_int_equal(alloc_samples_add(as, 10, 11, &r, sizeof(r), frames, 3), -EBADMSG);
	assert_int_equal(alloc_samples_add(as, 10, 11, &r, 8, frames, 3), -EBADMSG);
	assert_int_equal(alloc_samples_finish(as), 0);
	assert_int_equal(aggregate_nstacks(inuse), 0);
	alloc_samples_free(as);
	aggregate_free(alloc);
	aggregate_free(inuse);
}

/* Sampled blocks of one stack: live ones made by their sample and return. */
static void keep_blocks(struct alloc_samples *as, const uint64_t *frames, uint64_t *next_addr,
			int n)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(send(as, 11, ALLOC_EV_SAMPLE, 1000, CALLER, frames, 3), 0);
		assert_int_equal(send(as, 11, ALLOC_EV_RETURN, (*next_addr)++ * 16, 0, frames, 3),
				 0);
	}
}

static void free_blocks(struct alloc_samples *as, const uint64_t *frames, uint64_t *oldest, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(send(as, 12, ALLOC_EV_FREE, (*oldest)++ * 16, 0, frames, 3), 0);
}

/*
 * --leaks: a stack whose sampled blocks in use creep up by one at every
 * snapshot (a full cache, by chance) is not said to grow; one that keeps
 * ten more at every snapshot is; one that keeps ten more but once gives
 * back five (a pool that shrank) is not.
 */
static void test_growth_beyond_chance(void **state)
{
	struct aggregate *alloc = aggregate_new(), *inuse = aggregate_new();
	struct aggregate *growing = aggregate_new();
	struct alloc_samples *as = alloc_samples_new(1000, alloc, inuse, NULL, NULL);
	struct alloc_growth *g = alloc_growth_new(1, growing);
	uint64_t cache[] = {USER, MALLOC, CALLER}, leak[] = {USER, MALLOC, GRANDPA};
	uint64_t pool[] = {USER, MALLOC, OTHER};
	uint64_t cache_next = 0x1000, cache_oldest = 0x1000, leak_next = 0x100000;
	uint64_t pool_next = 0x200000, pool_oldest = 0x200000;

	(void)state;
	keep_blocks(as, cache, &cache_next, 30);
	for (int snap = 0; snap < 6; snap++) {
		assert_int_equal(alloc_growth_tick(g, as, (uint64_t)snap * 10), 0);
		keep_blocks(as, cache, &cache_next, 31); /* 31 in, 30 out: one more */
		free_blocks(as, cache, &cache_oldest, 30);
		keep_blocks(as, leak, &leak_next, 10);
		keep_blocks(as, pool, &pool_next, 10);
		if (snap == 3)
			free_blocks(as, pool, &pool_oldest, 15);
	}
	assert_int_equal(alloc_growth_finish(g, as), 1);
	assert_int_equal(aggregate_nstacks(growing), 1);
	const struct agg_stack *s = aggregate_stack(growing, 0);
	assert_int_equal(s->frames[s->nframes - 1], GRANDPA); /* the leak alone */
	alloc_growth_free(g);
	alloc_samples_free(as);
	aggregate_free(alloc);
	aggregate_free(inuse);
	aggregate_free(growing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_weight),
	    cmocka_unit_test(test_live_and_freed),
	    cmocka_unit_test(test_growth_beyond_chance),
	    cmocka_unit_test(test_caller_present),
	    cmocka_unit_test(test_trampoline),
	    cmocka_unit_test(test_nested_and_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
