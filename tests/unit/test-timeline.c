/*
 * Unit tests of timeline.c: events survive encoding, remapping keeps and
 * renumbers the right ones and puts them in time order, and malformed
 * bytes are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "profile/timeline.h"

static void test_round_trip(void **state)
{
	struct timeline_writer w;
	struct timeline_event *ev;
	unsigned char *buf;
	size_t len, n;

	timeline_writer_init(&w, 0);
	assert_int_equal(timeline_writer_add(&w, 2, 1000, 10101010), 0);
	assert_int_equal(timeline_writer_add(&w, 0, 11102000, 10100000), 0);
	assert_int_equal(timeline_writer_add(&w, 2, 11102000, 9999999), 0);
	assert_int_equal(timeline_writer_take(&w, &buf, &len), 0);
	assert_true(len < 3 * 8); /* compact: deltas, not absolute values */
	assert_int_equal(timeline_decode(buf, len, 3, &ev, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ev[1].index, 0);
	assert_int_equal(ev[1].time_ns, 11102000);
	assert_int_equal(ev[2].period, 9999999);

	/* An index beyond the samples, and truncation, are refused. */
	struct timeline_event *bad;
	assert_int_equal(timeline_decode(buf, len, 2, &bad, &n), -EBADMSG);
	assert_int_equal(timeline_decode(buf, len - 1, 3, &bad, &n), -EBADMSG);
	free(ev);

	/* Keep samples 2 (as 0) and drop sample 0. */
	uint64_t remap[3] = {0, 0, 1};
	unsigned char *out;
	size_t outlen;
	assert_int_equal(timeline_decode(buf, len, 3, &ev, &n), 0);
	assert_int_equal(timeline_remap(ev, n, remap, &out, &outlen), 0);
	free(ev);
	assert_int_equal(timeline_decode(out, outlen, 1, &ev, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].index, 0);
	assert_int_equal(ev[1].time_ns, 11102000);
	free(ev);
	free(out);
	free(buf);
}

/* A wait is added when its thread comes back, after other threads'
 * later samples: the remapped timeline is in time order, events at one
 * time in the order they were added. */
static void test_remap_orders_by_time(void **state)
{
	const struct timeline_event in[] = {
	    {0, 100, 1}, {1, 400, 2}, {2, 410, 3}, {3, 150, 300}, {1, 410, 4}, {2, 150, 5},
	};
	uint64_t remap[4] = {1, 2, 3, 4};
	struct timeline_event *ev;
	unsigned char *out;
	size_t outlen, n;

	assert_int_equal(timeline_remap(in, 6, remap, &out, &outlen), 0);
	assert_int_equal(timeline_decode(out, outlen, 4, &ev, &n), 0);
	assert_int_equal(n, 6);
	const int64_t want[][3] = {{0, 100, 1}, {3, 150, 300}, {2, 150, 5},
				   {1, 400, 2}, {2, 410, 3},   {1, 410, 4}};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ev[i].index, want[i][0]);
		assert_int_equal(ev[i].time_ns, want[i][1]);
		assert_int_equal(ev[i].period, want[i][2]);
	}
	free(ev);
	free(out);
}

static void test_limit(void **state)
{
	struct timeline_writer w;

	timeline_writer_init(&w, 64);
	int i = 0;
	while (timeline_writer_add(&w, 1, i, 1) == 0)
		i++;
	assert_int_equal(timeline_writer_add(&w, 1, i, 1), -ENOBUFS);
	assert_int_equal(w.dropped, 2);
	assert_true(w.len <= 64);
	timeline_writer_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_remap_orders_by_time),
	    cmocka_unit_test(test_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
