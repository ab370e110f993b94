/*
 * Unit tests of the stack copy that grows: it asks for more once the
 * stacks cut where it ended are 1 in 100 of the samples taken with it,
 * 4 at least; twice the copy, or as much as the stacks cut wanted, up to
 * the kernel's limit; a sample of a copy before it grew, read after,
 * counts for that copy; a copy that does not grow never asks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perf/perf-events.h"
#include "perf/stack-copy.h"

/* n samples that asked for asked bytes, cut where their copy ended or
 * whole. */
static void seen(struct stack_copy *c, int n, uint64_t asked, int cut)
{
	for (int i = 0; i < n; i++)
		stack_copy_seen(c, asked, cut);
}

static void test_one_in_a_hundred(void **state)
{
	struct stack_copy c;

	stack_copy_init(&c, 8192, 1);
	seen(&c, 3, 8192, 1);
	assert_int_equal(stack_copy_wants(&c, 0), 0); /* 3 cut: fewer than 4 */
	seen(&c, 397, 8192, 0);
	assert_int_equal(stack_copy_wants(&c, 0), 0); /* 3 of 400 */
	seen(&c, 1, 8192, 1);
	assert_int_equal(stack_copy_wants(&c, 0), 0); /* 4 of 401: under 1 in 100 */
	seen(&c, 98, 8192, 0);
	seen(&c, 1, 8192, 1);
	assert_int_equal(stack_copy_wants(&c, 0), 16384); /* 5 of 500 */
	(void)state;
}

static void test_as_much_as_wanted(void **state)
{
	struct stack_copy c;

	stack_copy_init(&c, 8192, 1);
	seen(&c, 10, 8192, 1);
	assert_int_equal(stack_copy_wants(&c, 20000), 32768);
	assert_int_equal(stack_copy_wants(&c, 1 << 20), PERF_EVENTS_MAX_STACK_BYTES);
	stack_copy_grown(&c, PERF_EVENTS_MAX_STACK_BYTES);
	seen(&c, 10, PERF_EVENTS_MAX_STACK_BYTES, 1);
	assert_int_equal(stack_copy_wants(&c, 1 << 20), 0); /* at the limit */
	(void)state;
}

static void test_stale_samples(void **state)
{
	struct stack_copy c;
	uint64_t before, cut_before;

	stack_copy_init(&c, 8192, 1);
	assert_false(stack_copy_grew(&c, &before, &cut_before));
	seen(&c, 10, 8192, 1);
	stack_copy_grown(&c, stack_copy_wants(&c, 0));
	assert_int_equal(c.now, 16384);
	/* Taken before it grew, read after: they count for 8 KiB, and do
	 * not make 16 KiB grow. */
	seen(&c, 10, 8192, 1);
	seen(&c, 5, 16384, 0);
	assert_int_equal(stack_copy_wants(&c, 0), 0);
	assert_true(stack_copy_grew(&c, &before, &cut_before));
	assert_int_equal(before, 20);
	assert_int_equal(cut_before, 20);
	seen(&c, 4, 16384, 1);
	assert_int_equal(stack_copy_wants(&c, 0), 32768);
	assert_true(stack_copy_grew(&c, &before, &cut_before));
	assert_int_equal(before, 20);
	assert_int_equal(cut_before, 20);
	(void)state;
}

static void test_kept(void **state)
{
	struct stack_copy c;

	stack_copy_init(&c, 8192, 0);
	seen(&c, 100, 8192, 1);
	assert_int_equal(stack_copy_wants(&c, 0), 0);
	assert_int_equal(stack_copy_check(&c, NULL, 0, -1), 0);
	assert_int_equal(c.now, 8192);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_in_a_hundred),
	    cmocka_unit_test(test_as_much_as_wanted),
	    cmocka_unit_test(test_stale_samples),
	    cmocka_unit_test(test_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
