/*
 * Unit tests of the times of trace --fast's records: a record's CPU clock
 * reading is placed on CLOCK_MONOTONIC by the two readings of both clocks
 * around it, not by the newest ones, so a record read late keeps the
 * time it would have had read early, and a thread's times only go up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "inject/fast-set-internal.h"

/* Readings whose rates differ: 2 ns a tick, then 0.5 ns. */
static void test_between_readings(void **state)
{
	struct fast_set *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	s->cal[0] = (struct cal_point){1000, 1000};
	s->cal[1] = (struct cal_point){2000, 3000};
	s->cal[2] = (struct cal_point){3000, 3500};
	s->ncal = 3;
	assert_int_equal(fast_set_tsc_to_mono(s, 1500), 2000); /* on the first segment */
	assert_int_equal(fast_set_tsc_to_mono(s, 2000), 3000);
	assert_int_equal(fast_set_tsc_to_mono(s, 2500), 3250); /* on the second */
	assert_int_equal(fast_set_tsc_to_mono(s, 4000), 4000); /* past the newest: its line */
	assert_int_equal(fast_set_tsc_to_mono(s, 500), 0);     /* before the oldest: its line */
	free(s);
}

/* More readings than are kept: the oldest are overwritten in turn, and a
 * reading between two kept ones is still on their segment. */
static void test_wrapped(void **state)
{
	struct fast_set *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	/* Reading i at tick 1000 i; 1 ns a tick before reading 40, 3 after. */
	for (uint64_t i = 0; i < CAL_POINTS + 10; i++) {
		uint64_t mono = i <= 40 ? 1000 * i : 40000 + 3000 * (i - 40);
		s->cal[s->ncal++ % CAL_POINTS] = (struct cal_point){1000 * i, mono};
	}
	assert_int_equal(fast_set_tsc_to_mono(s, 20500), 20500);
	assert_int_equal(fast_set_tsc_to_mono(s, 40500), 41500);
	assert_int_equal(fast_set_tsc_to_mono(s, 60000), 100000);
	/* Reading 10 is the oldest kept: before it, its segment's line. */
	assert_int_equal(fast_set_tsc_to_mono(s, 9000), 9000);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_between_readings),
	    cmocka_unit_test(test_wrapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
