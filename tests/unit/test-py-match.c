/*
 * Unit tests of the pairing of samples with Python frame records: within
 * the window while the side is unknown, older records dropped as the
 * orphans of lost samples; the side learnt from matches in a row; on
 * each side a record past the window (a stalled CPU) still its sample's
 * when no record was dropped, the other side's records orphans or a
 * later sample's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "profile/py-match.h"

#define US     1000ull
#define MS     1000000ull
#define WINDOW MS

/* What py-samples does with a thread's queue times[0..n): the index of
 * the sample's record, or -1; *dropped: the orphans dropped. */
static long pick(struct py_match *m, const uint64_t *times, size_t n, uint64_t time, int no_drops,
		 size_t *dropped)
{
	size_t k = 0;

	while (k < n && py_match_orphan(m, times[k], k + 1 < n ? &times[k + 1] : NULL, time))
		k++;
	*dropped = k;
	if (k == n)
		return -1;
	enum py_match_take t = py_match_take(m, times[k], time);
	return t == PY_TAKE_YES || (t == PY_TAKE_IF_NO_DROPS && no_drops) ? (long)k : -1;
}

/* Teaches m the side: PY_MATCH_LEARN matches d ns from their samples. */
static void teach(struct py_match *m, int64_t d)
{
	size_t dropped;

	for (unsigned i = 0; i < PY_MATCH_LEARN; i++) {
		uint64_t time = 100 * MS + i * 10 * MS, rec = (uint64_t)((int64_t)time + d);
		assert_int_equal(pick(m, &rec, 1, time, 1, &dropped), 0);
	}
}

static void test_window(void **state)
{
	struct py_match m;
	size_t dropped;
	(void)state;

	py_match_init(&m, WINDOW);
	/* An orphan 5 ms before, the sample's own 4 us after. */
	uint64_t q[] = {95 * MS, 100 * MS + 4 * US, 110 * MS};
	assert_int_equal(pick(&m, q, 3, 100 * MS, 1, &dropped), 1);
	assert_int_equal(dropped, 1);
	/* Its own 3 ms late: not taken, nothing dropped. */
	uint64_t late[] = {103 * MS};
	assert_int_equal(pick(&m, late, 1, 100 * MS, 1, &dropped), -1);
	assert_int_equal(dropped, 0);
	/* Just before, on older kernels: taken. */
	uint64_t before[] = {100 * MS - 4 * US};
	assert_int_equal(pick(&m, before, 1, 100 * MS, 1, &dropped), 0);
	assert_int_equal(m.side, PY_SIDE_UNKNOWN);
}

static void test_learn(void **state)
{
	struct py_match m;
	size_t dropped;
	(void)state;

	py_match_init(&m, WINDOW);
	for (unsigned i = 0; i + 1 < PY_MATCH_LEARN; i++) {
		uint64_t rec = 100 * MS + 3 * US;
		pick(&m, &rec, 1, 100 * MS, 1, &dropped);
	}
	assert_int_equal(m.side, PY_SIDE_UNKNOWN);
	/* One the other way starts again. */
	uint64_t rec = 100 * MS - 3 * US;
	pick(&m, &rec, 1, 100 * MS, 1, &dropped);
	teach(&m, 3 * US);
	assert_int_equal(m.side, PY_SIDE_AFTER);

	py_match_init(&m, WINDOW);
	teach(&m, -3 * (int64_t)US);
	assert_int_equal(m.side, PY_SIDE_BEFORE);
}

static void test_after(void **state)
{
	struct py_match m;
	size_t dropped;
	(void)state;

	py_match_init(&m, WINDOW);
	teach(&m, 3 * US);
	/* A stall of 3 ms between perf's time and the program's: its own
	 * still, unless the ring dropped a record. An orphan 10 us before
	 * the sample (within the window) goes. */
	uint64_t q[] = {100 * MS - 10 * US, 103 * MS, 104 * MS};
	assert_int_equal(pick(&m, q, 3, 100 * MS, 1, &dropped), 1);
	assert_int_equal(dropped, 1);
	assert_int_equal(pick(&m, q + 1, 2, 100 * MS, 0, &dropped), -1);
	/* Past the stall bound: a later sample's. */
	uint64_t far[] = {100 * MS + PY_MATCH_STALL_NS + 1};
	assert_int_equal(pick(&m, far, 1, 100 * MS, 1, &dropped), -1);
	assert_int_equal(dropped, 0);
	/* Two samples microseconds apart take their records in turn. */
	uint64_t two[] = {100 * MS + 3 * US, 100 * MS + 9 * US};
	assert_int_equal(pick(&m, two, 2, 100 * MS, 1, &dropped), 0);
	assert_int_equal(pick(&m, two + 1, 1, 100 * MS + 6 * US, 1, &dropped), 0);
	assert_int_equal(dropped, 0);
}

static void test_before(void **state)
{
	struct py_match m;
	size_t dropped;
	(void)state;

	py_match_init(&m, WINDOW);
	teach(&m, -3 * (int64_t)US);
	/* Two orphans, its own 3 ms before (a stall), a later sample's. */
	uint64_t q[] = {90 * MS, 96 * MS, 97 * MS, 100 * MS + 1 * US};
	assert_int_equal(pick(&m, q, 4, 100 * MS, 1, &dropped), 2);
	assert_int_equal(dropped, 2);
	assert_int_equal(pick(&m, q + 2, 2, 100 * MS, 0, &dropped), -1);
	/* Only a later sample's: not taken, not dropped. */
	assert_int_equal(pick(&m, q + 3, 1, 100 * MS, 1, &dropped), -1);
	assert_int_equal(dropped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_window),
	    cmocka_unit_test(test_learn),
	    cmocka_unit_test(test_after),
	    cmocka_unit_test(test_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
