/*
 * Unit tests of the pairing of samples with Python frame records: within
 * the window of the program's run while the side is unknown, older
 * records dropped as the orphans of lost samples, a slow run (a cold
 * first one) still matched by its end; the side learnt from matches in
 * a row; on each side a record past the window (a stalled CPU) still its
 * sample's when no record was dropped, the other side's records orphans
 * or a later sample's.
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
#define RUN    (2 * US) /* a program's run */

/* A record whose run started at start and took RUN. */
#define AT(start)                                                                                  \
	{                                                                                          \
		(start), (start) + RUN                                                             \
	}

/* What py-samples does with a thread's queue q[0..n): the index of the
 * sample's record, or -1; *dropped: the orphans dropped. */
static long pick(struct py_match *m, const struct py_match_run *q, size_t n, uint64_t time,
		 int no_drops, size_t *dropped)
{
	size_t k = 0;

	while (k < n && py_match_orphan(m, &q[k], k + 1 < n ? &q[k + 1] : NULL, time))
		k++;
	*dropped = k;
	if (k == n)
		return -1;
	enum py_match_take t = py_match_take(m, &q[k], time);
	return t == PY_TAKE_YES || (t == PY_TAKE_IF_NO_DROPS && no_drops) ? (long)k : -1;
}

/* Teaches m the side: PY_MATCH_LEARN matches, each record's run
 * starting d ns from its sample. */
static void teach(struct py_match *m, int64_t d)
{
	size_t dropped;

	for (unsigned i = 0; i < PY_MATCH_LEARN; i++) {
		uint64_t time = 100 * MS + i * 10 * MS;
		struct py_match_run rec = AT((uint64_t)((int64_t)time + d));
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
	struct py_match_run q[] = {AT(95 * MS), AT(100 * MS + 4 * US), AT(110 * MS)};
	assert_int_equal(pick(&m, q, 3, 100 * MS, 1, &dropped), 1);
	assert_int_equal(dropped, 1);
	/* Its own 3 ms late: not taken, nothing dropped. */
	struct py_match_run late[] = {AT(103 * MS)};
	assert_int_equal(pick(&m, late, 1, 100 * MS, 1, &dropped), -1);
	assert_int_equal(dropped, 0);
	/* Just before, on older kernels: taken. */
	struct py_match_run before[] = {AT(100 * MS - 4 * US)};
	assert_int_equal(pick(&m, before, 1, 100 * MS, 1, &dropped), 0);
	/* A first run that took 3 ms, ending just before its sample: its
	 * end is what counts. */
	struct py_match_run cold[] = {{97 * MS, 100 * MS - 4 * US}};
	assert_int_equal(pick(&m, cold, 1, 100 * MS, 1, &dropped), 0);
	assert_int_equal(dropped, 0);
	assert_int_equal(m.side, PY_SIDE_UNKNOWN);
}

static void test_learn(void **state)
{
	struct py_match m;
	size_t dropped;
	(void)state;

	py_match_init(&m, WINDOW);
	for (unsigned i = 0; i + 1 < PY_MATCH_LEARN; i++) {
		struct py_match_run rec = AT(100 * MS + 3 * US);
		pick(&m, &rec, 1, 100 * MS, 1, &dropped);
	}
	assert_int_equal(m.side, PY_SIDE_UNKNOWN);
	/* One the other way starts again. */
	struct py_match_run other = AT(100 * MS - 3 * US);
	pick(&m, &other, 1, 100 * MS, 1, &dropped);
	assert_int_equal(m.side, PY_SIDE_UNKNOWN);
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
	struct py_match_run q[] = {AT(100 * MS - 10 * US), AT(103 * MS), AT(104 * MS)};
	assert_int_equal(pick(&m, q, 3, 100 * MS, 1, &dropped), 1);
	assert_int_equal(dropped, 1);
	assert_int_equal(pick(&m, q + 1, 2, 100 * MS, 0, &dropped), -1);
	/* Past the stall bound: a later sample's. */
	struct py_match_run far[] = {AT(100 * MS + PY_MATCH_STALL_NS + 1)};
	assert_int_equal(pick(&m, far, 1, 100 * MS, 1, &dropped), -1);
	assert_int_equal(dropped, 0);
	/* Two samples microseconds apart take their records in turn. */
	struct py_match_run two[] = {AT(100 * MS + 3 * US), AT(100 * MS + 9 * US)};
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
	teach(&m, -3 * (int64_t)US - (int64_t)RUN);
	assert_int_equal(m.side, PY_SIDE_BEFORE);
	/* Two orphans, its own 3 ms before (a stall), a later sample's. */
	struct py_match_run q[] = {AT(90 * MS), AT(96 * MS), AT(97 * MS), AT(100 * MS + 1 * US)};
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
