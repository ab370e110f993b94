/*
 * Unit tests of perf-ring.c on the kernel's own rings: COMM records that
 * this thread makes (prctl PR_SET_NAME) come back whole, in order, and
 * across the end of a one-page buffer through the bounce copy; two rings
 * are merged in time order; a handler that stops the pass leaves the
 * next record for the next pass, and so do records newer than the
 * pass's time limit. A hand-made ring with impossible
 * headers (size 0, larger than written, head ahead by more than the
 * buffer) is skipped and counted as malformed, never read past.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf-ring.h"

/* What the handler saw: comm names and times, per ring. */
struct seen {
	char slot[2][16]; /* the parsed record of each ring */
	uint64_t slot_time[2];
	char names[512][16];
	uint64_t times[512];
	size_t rings[512];
	size_t n;
	size_t stop_after; /* 0: never stop */
};

/* PERF_RECORD_COMM with sample_id_all and PERF_SAMPLE_TIME: pid, tid,
 * the name padded to 8 bytes, then the time as the record's last u64. */
static int parse(void *ctx, size_t ring, const unsigned char *rec, size_t len, uint64_t *time)
{
	struct seen *s = ctx;
	const struct perf_event_header *h = (const void *)rec;

	if (h->type != PERF_RECORD_COMM)
		return 0;
	if (len < sizeof(*h) + 8 + 8 + 8)
		return -1;
	memcpy(time, rec + len - 8, 8);
	snprintf(s->slot[ring], sizeof(s->slot[ring]), "%s", (const char *)rec + sizeof(*h) + 8);
	s->slot_time[ring] = *time;
	return 1;
}

static int handle(void *ctx, size_t ring)
{
	struct seen *s = ctx;

	if (s->n < 512) {
		memcpy(s->names[s->n], s->slot[ring], 16);
		s->times[s->n] = s->slot_time[ring];
		s->rings[s->n] = ring;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static const struct perf_ring_ops ops = {parse, handle};

static void open_ring(struct perf_ring *r)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.comm = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(perf_ring_map(r, fd, 1, 1), 0);
}

static void rename_self(int i)
{
	char name[16];

	snprintf(name, sizeof(name), "ring-%d", i);
	prctl(PR_SET_NAME, name);
}

static void test_order_and_wrap(void **state)
{
	struct perf_ring r;
	struct perf_ring_counts counts = {0};
	struct seen *s = calloc(1, sizeof(*s));
	char name[16];

	(void)state;
	assert_non_null(s);
	open_ring(&r);
	/* A COMM record here is 40 bytes: 60 of them fill most of a page,
	 * and the next 60 run across its end. */
	for (int round = 0; round < 4; round++) {
		s->n = 0;
		for (int i = 0; i < 60; i++)
			rename_self(round * 100 + i);
		assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 60);
		assert_int_equal(s->n, 60);
		for (int i = 0; i < 60; i++) {
			snprintf(name, sizeof(name), "ring-%d", round * 100 + i);
			assert_string_equal(s->names[i], name);
			if (i)
				assert_true(s->times[i] >= s->times[i - 1]);
		}
	}
	assert_true(counts.wraps >= 1);
	assert_int_equal(counts.malformed, 0);
	/* Nothing new: a pass handles nothing. */
	assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 0);
	perf_ring_release(&r);
	free(s);
}

static void test_merge_and_stop(void **state)
{
	struct perf_ring r[2];
	struct perf_ring_counts counts = {0};
	struct seen *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	open_ring(&r[0]);
	open_ring(&r[1]);
	for (int i = 0; i < 20; i++)
		rename_self(i);
	/* Stop after 15: the other 25 stay for the next pass. */
	s->stop_after = 15;
	assert_int_equal(perf_rings_read(r, 2, UINT64_MAX, &ops, s, &counts), 15);
	s->stop_after = 0;
	assert_int_equal(perf_rings_read(r, 2, UINT64_MAX, &ops, s, &counts), 25);
	assert_int_equal(s->n, 40);
	size_t per_ring[2] = {0, 0};
	for (size_t i = 0; i < 40; i++) {
		per_ring[s->rings[i]]++;
		if (i)
			assert_true(s->times[i] >= s->times[i - 1]);
	}
	assert_int_equal(per_ring[0], 20);
	assert_int_equal(per_ring[1], 20);
	assert_int_equal(counts.malformed, 0);
	perf_ring_release(&r[0]);
	perf_ring_release(&r[1]);
	free(s);
}

/* Records stamped after the pass's time limit wait for the next pass,
 * in every ring, however far the heads have moved. */
static void test_until(void **state)
{
	struct perf_ring r[2];
	struct perf_ring_counts counts = {0};
	struct seen *s = calloc(1, sizeof(*s));
	struct timespec ts;

	(void)state;
	assert_non_null(s);
	open_ring(&r[0]);
	open_ring(&r[1]);
	for (int i = 0; i < 10; i++)
		rename_self(i);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t until = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (int i = 10; i < 16; i++)
		rename_self(i);
	assert_int_equal(perf_rings_read(r, 2, until, &ops, s, &counts), 20);
	for (size_t i = 0; i < 20; i++)
		assert_true(s->times[i] <= until);
	assert_string_equal(s->names[19], "ring-9");
	assert_int_equal(perf_rings_read(r, 2, until, &ops, s, &counts), 0);
	assert_int_equal(perf_rings_read(r, 2, UINT64_MAX, &ops, s, &counts), 12);
	assert_string_equal(s->names[20], "ring-10");
	assert_int_equal(s->n, 32);
	assert_int_equal(counts.malformed, 0);
	perf_ring_release(&r[0]);
	perf_ring_release(&r[1]);
	free(s);
}

/* A ring in ordinary memory whose head and records the test writes. */
struct fake {
	struct perf_event_mmap_page meta;
	uint64_t data[512]; /* 4096 bytes */
};

static void fake_ring(struct perf_ring *r, struct fake *f, uint64_t head)
{
	perf_ring_init(r);
	r->meta = &f->meta;
	r->data = (const unsigned char *)f->data;
	r->size = sizeof(f->data);
	f->meta.data_head = head;
	f->meta.data_tail = 0;
}

static void put_header(struct fake *f, size_t at, uint32_t type, uint16_t size)
{
	struct perf_event_header h = {type, 0, size};

	memcpy((unsigned char *)f->data + at, &h, sizeof(h));
}

static void test_malformed(void **state)
{
	struct perf_ring r;
	struct perf_ring_counts counts = {0};
	struct seen *s = calloc(1, sizeof(*s));
	struct fake *f = calloc(1, sizeof(*f));

	(void)state;
	assert_non_null(s);
	assert_non_null(f);
	/* A size of zero would loop forever if trusted. */
	put_header(f, 0, PERF_RECORD_COMM, 0);
	fake_ring(&r, f, 64);
	assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 0);
	assert_int_equal(counts.malformed, 1);
	assert_int_equal(f->meta.data_tail, 64); /* the rest is given up */
	/* A record longer than what was written. */
	memset(f, 0, sizeof(*f));
	put_header(f, 0, PERF_RECORD_COMM, 200);
	fake_ring(&r, f, 64);
	assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 0);
	assert_int_equal(counts.malformed, 2);
	/* A head more than a whole buffer ahead of the tail. */
	memset(f, 0, sizeof(*f));
	fake_ring(&r, f, 3 * sizeof(f->data));
	assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 0);
	assert_int_equal(counts.malformed, 3);
	/* A record parse rejects is skipped, the next one still read. */
	memset(f, 0, sizeof(*f));
	put_header(f, 0, PERF_RECORD_COMM, 16); /* too short for a COMM */
	put_header(f, 16, PERF_RECORD_COMM, 40);
	memcpy((unsigned char *)f->data + 16 + 16, "fake", 5);
	fake_ring(&r, f, 56);
	assert_int_equal(perf_rings_read(&r, 1, UINT64_MAX, &ops, s, &counts), 1);
	assert_int_equal(counts.malformed, 4);
	assert_string_equal(s->names[0], "fake");
	free(f);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_and_wrap),
	    cmocka_unit_test(test_merge_and_stop),
	    cmocka_unit_test(test_until),
	    cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
