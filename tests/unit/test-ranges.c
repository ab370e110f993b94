/*
 * Unit tests of the range table behind every address lookup: nesting
 * (the innermost range wins), aliases (the highest rank wins), gaps,
 * a perf map's "later line replaces earlier" rule, and the cap on walking
 * up hostile nesting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/ranges.h"

static uint32_t idx_at(const struct ranges *t, uint64_t addr)
{
	const struct range *r = ranges_find(t, addr);

	return r ? r->idx : UINT32_MAX;
}

static void test_nesting(void **state)
{
	struct ranges t;

	ranges_init(&t);
	/* A function [100, 200) with an inlined call [120, 160) that itself
	 * inlines [130, 140); a second function [200, 300); a gap after. */
	assert_int_equal(ranges_add(&t, 120, 160, 2, 0), 0);
	assert_int_equal(ranges_add(&t, 100, 200, 1, 0), 0);
	assert_int_equal(ranges_add(&t, 130, 140, 3, 0), 0);
	assert_int_equal(ranges_add(&t, 200, 300, 4, 0), 0);
	assert_int_equal(ranges_add(&t, 400, 400, 9, 0), 0); /* empty: ignored */
	assert_int_equal(ranges_finish(&t, 0), 0);
	assert_int_equal(t.n, 4);

	assert_int_equal(idx_at(&t, 99), UINT32_MAX);
	assert_int_equal(idx_at(&t, 100), 1);
	assert_int_equal(idx_at(&t, 125), 2);
	assert_int_equal(idx_at(&t, 135), 3);
	assert_int_equal(idx_at(&t, 140), 2); /* back out of the inner one */
	assert_int_equal(idx_at(&t, 170), 1); /* and out of the middle one */
	assert_int_equal(idx_at(&t, 199), 1);
	assert_int_equal(idx_at(&t, 200), 4);
	assert_int_equal(idx_at(&t, 300), UINT32_MAX);
	assert_int_equal(idx_at(&t, 400), UINT32_MAX);
	ranges_release(&t);
}

static void test_aliases_and_same_start(void **state)
{
	struct ranges t;

	ranges_init(&t);
	/* Two names for one function: the higher rank names it. A range
	 * starting at the same place but shorter is nested in it. */
	assert_int_equal(ranges_add(&t, 0x1000, 0x1100, 1, 7), 0);
	assert_int_equal(ranges_add(&t, 0x1000, 0x1100, 2, 9), 0);
	assert_int_equal(ranges_add(&t, 0x1000, 0x1100, 3, 8), 0);
	assert_int_equal(ranges_add(&t, 0x1000, 0x1010, 4, 0), 0);
	assert_int_equal(ranges_finish(&t, 0), 0);
	assert_int_equal(idx_at(&t, 0x1008), 4);
	assert_int_equal(idx_at(&t, 0x1010), 2);
	assert_int_equal(idx_at(&t, 0x10ff), 2);
	ranges_release(&t);
}

static void test_keep_last_per_start(void **state)
{
	struct ranges t;

	ranges_init(&t);
	assert_int_equal(ranges_add(&t, 0x5000, 0x5100, 0, 0), 0);
	assert_int_equal(ranges_add(&t, 0x5000, 0x5080, 1, 1), 0); /* replaces the first */
	assert_int_equal(ranges_add(&t, 0x6000, 0x6010, 2, 2), 0);
	assert_int_equal(ranges_finish(&t, 1), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(idx_at(&t, 0x5010), 1);
	assert_int_equal(idx_at(&t, 0x5090), UINT32_MAX);
	assert_int_equal(idx_at(&t, 0x6000), 2);
	ranges_release(&t);
}

static void test_hostile_nesting(void **state)
{
	struct ranges t;
	const uint32_t n = 100000;

	ranges_init(&t);
	/* [k, 2n - k) for every k: each inside the previous. An address in
	 * the outermost only would need a walk through all of them. */
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(ranges_add(&t, k, 2 * (uint64_t)n - k, k, 0), 0);
	assert_int_equal(ranges_finish(&t, 0), 0);
	assert_int_equal(idx_at(&t, n), n - 1);
	assert_int_equal(idx_at(&t, 5), 5);
	/* 100 levels up from where the search lands: found; n - 10 levels
	 * up: given up, not walked. */
	assert_int_equal(idx_at(&t, n + 100), n - 101);
	assert_int_equal(idx_at(&t, 2 * (uint64_t)n - 10), UINT32_MAX);
	ranges_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nesting),
	    cmocka_unit_test(test_aliases_and_same_start),
	    cmocka_unit_test(test_keep_last_per_start),
	    cmocka_unit_test(test_hostile_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
