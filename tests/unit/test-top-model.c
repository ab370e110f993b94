/*
 * Unit tests of the top model with made-up tasks and samples: CPU and
 * context-switch rates against the previous snapshot, a reused TID that
 * must not inherit an old row, the hot and the last function, process
 * rows that sum their threads, sorting and filtering, and the distinct
 * stacks of a row over several intervals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "top/top-model.h"

static const char *const F_BUSY = "busy_spin", *const F_MAIN = "main", *const F_OTHER = "other";

static struct procstat_task task(pid_t pid, pid_t tid, const char *name, uint64_t utime,
				 uint64_t stime, uint64_t start)
{
	struct procstat_task t;

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	snprintf(t.comm, sizeof(t.comm), "%s", name);
	t.state = 'S';
	t.utime = utime;
	t.stime = stime;
	t.starttime = start;
	t.rss_pages = 10;
	t.vcsw = utime; /* anything that grows */
	return t;
}

static struct top_model *model(int by_process)
{
	struct top_model_config cfg = {by_process, 4, 100, 4};
	struct top_model *m;

	assert_int_equal(top_model_new(&cfg, &m), 0);
	return m;
}

static void add(struct top_model *m, struct procstat_task t)
{
	assert_int_equal(top_model_add_task(m, &t), 0);
}

static void sample(struct top_model *m, pid_t pid, pid_t tid, uint64_t time, const char *fn,
		   uint64_t leaf)
{
	uint64_t frames[2] = {leaf, 0x1000};

	assert_int_equal(top_model_add_sample(m, pid, tid, time, fn, frames, 2), 0);
}

static void test_rates_and_hot(void **state)
{
	struct top_model *m = model(0);
	const struct top_row *r;

	(void)state;
	top_model_begin(m, 0);
	add(m, task(10, 10, "main", 0, 0, 5));
	add(m, task(10, 11, "worker", 100, 0, 6));
	assert_int_equal(top_model_end(m), 0);

	top_model_begin(m, 2.0);
	add(m, task(10, 10, "main", 0, 0, 5));
	add(m, task(10, 11, "worker", 250, 50, 6)); /* 150 + 50 ticks in 2 s at 100 Hz */
	for (int i = 0; i < 9; i++)
		sample(m, 10, 11, 100 + (uint64_t)i, F_BUSY, 0x2000);
	sample(m, 10, 11, 50, F_OTHER, 0x3000); /* earliest: not the last one */
	sample(m, 10, 99, 60, F_BUSY, 0x2000);	/* a thread with no row: ignored */
	assert_int_equal(top_model_end(m), 0);

	r = top_model_find(m, 10, 11);
	assert_non_null(r);
	assert_true(r->cpu_user > 74.9 && r->cpu_user < 75.1);
	assert_true(r->cpu_sys > 24.9 && r->cpu_sys < 25.1);
	assert_true(r->vcsw_rate > 74.9 && r->vcsw_rate < 75.1);
	assert_int_equal(r->samples, 10);
	assert_ptr_equal(r->hot, F_BUSY);
	assert_true(r->hot_share > 0.89 && r->hot_share < 0.91);
	assert_ptr_equal(r->last, F_BUSY);
	assert_int_equal(r->rss_kb, 40);

	r = top_model_find(m, 10, 10);
	assert_non_null(r);
	assert_true(r->cpu_user == 0);
	assert_null(r->hot);
	assert_null(r->last);

	const struct top_header *h = top_model_header(m);
	assert_int_equal(h->threads, 2);
	assert_int_equal(h->processes, 1);
	assert_int_equal(h->samples, 11);
	assert_true(h->cpu > 99.9 && h->cpu < 100.1);

	/* An idle interval keeps the last function, not the hot one. */
	top_model_begin(m, 1.0);
	add(m, task(10, 11, "worker", 250, 50, 6));
	assert_int_equal(top_model_end(m), 0);
	r = top_model_find(m, 10, 11);
	assert_null(r->hot);
	assert_ptr_equal(r->last, F_BUSY);
	assert_true(r->cpu_user == 0);
	assert_null(top_model_find(m, 10, 10)); /* it vanished: its row went */
	top_model_free(m);
}

static void test_reused_tid(void **state)
{
	struct top_model *m = model(0);
	const struct top_row *r;

	(void)state;
	top_model_begin(m, 0);
	add(m, task(10, 11, "old", 500, 0, 6));
	sample(m, 10, 11, 1, F_OTHER, 0x3000);
	assert_int_equal(top_model_end(m), 0);
	/* Same TID, another start time: a new thread, born in the interval. */
	top_model_begin(m, 1.0);
	add(m, task(10, 11, "new", 30, 0, 900));
	assert_int_equal(top_model_end(m), 0);
	r = top_model_find(m, 10, 11);
	assert_string_equal(r->name, "new");
	assert_null(r->last);
	assert_true(r->cpu_user > 29.9 && r->cpu_user < 30.1);
	top_model_free(m);
}

static void test_process_rows(void **state)
{
	struct top_model *m = model(1);
	const struct top_row *r;

	(void)state;
	top_model_begin(m, 0);
	add(m, task(20, 21, "w", 10, 0, 8));
	add(m, task(20, 20, "proc", 0, 0, 7));
	add(m, task(30, 30, "solo", 0, 0, 9));
	assert_int_equal(top_model_end(m), 0);
	top_model_begin(m, 1.0);
	add(m, task(20, 21, "w", 60, 0, 8));
	add(m, task(20, 20, "proc", 20, 0, 7));
	add(m, task(20, 22, "new", 10, 0, 99));
	add(m, task(30, 30, "solo", 0, 0, 9));
	sample(m, 20, 21, 5, F_BUSY, 0x2000);
	sample(m, 20, 22, 6, F_BUSY, 0x2000);
	sample(m, 20, 20, 7, F_MAIN, 0x4000);
	assert_int_equal(top_model_end(m), 0);

	const struct top_row *rows;
	assert_int_equal(top_model_rows(m, &rows), 2);
	r = top_model_find(m, 20, 0);
	assert_non_null(r);
	assert_string_equal(r->name, "proc");
	assert_int_equal(r->nthreads, 3);
	assert_true(r->cpu_user > 79.9 && r->cpu_user < 80.1);
	assert_int_equal(r->samples, 3);
	assert_ptr_equal(r->hot, F_BUSY);
	assert_ptr_equal(r->last, F_MAIN);
	assert_int_equal(top_model_header(m)->threads, 4);

	/* Stacks of a process row gather every thread's samples. */
	const struct top_stack *st;
	uint64_t total;
	assert_int_equal(top_model_stacks(m, 20, 20, 1, &st, &total), 2);
	assert_int_equal(total, 3);
	assert_int_equal(st[0].count, 2);
	assert_int_equal(st[0].frames[0], 0x2000);
	top_model_free(m);
}

static void test_view(void **state)
{
	struct top_model *m = model(0);
	const struct top_row *const *v;

	(void)state;
	top_model_begin(m, 0);
	add(m, task(10, 11, "zeta", 0, 0, 1));
	add(m, task(10, 12, "alpha", 0, 0, 1));
	add(m, task(10, 13, "mid", 0, 0, 1));
	assert_int_equal(top_model_end(m), 0);
	top_model_begin(m, 1.0);
	add(m, task(10, 11, "zeta", 50, 0, 1));
	add(m, task(10, 12, "alpha", 10, 0, 1));
	add(m, task(10, 13, "mid", 30, 0, 1));
	sample(m, 10, 12, 1, F_OTHER, 0x3000);
	assert_int_equal(top_model_end(m), 0);

	assert_int_equal(top_model_view(m, TOP_SORT_CPU, NULL, &v), 3);
	assert_string_equal(v[0]->name, "zeta");
	assert_string_equal(v[1]->name, "mid");
	assert_string_equal(v[2]->name, "alpha");
	assert_int_equal(top_model_view(m, TOP_SORT_NAME, "", &v), 3);
	assert_string_equal(v[0]->name, "alpha");
	assert_string_equal(v[2]->name, "zeta");
	assert_int_equal(top_model_view(m, TOP_SORT_NAME, "et", &v), 1);
	assert_string_equal(v[0]->name, "zeta");
	assert_int_equal(top_model_view(m, TOP_SORT_NAME, "other", &v), 1); /* by function */
	assert_string_equal(v[0]->name, "alpha");
	assert_int_equal(top_model_view(m, TOP_SORT_NAME, "13", &v), 1); /* by tid */
	assert_string_equal(v[0]->name, "mid");
	assert_int_equal(top_model_view(m, TOP_SORT_NAME, "nothing", &v), 0);
	top_model_free(m);
}

static void test_stack_history(void **state)
{
	struct top_model *m = model(0); /* 4 intervals kept */
	const struct top_stack *st;
	uint64_t total;

	(void)state;
	for (int i = 0; i < 6; i++) {
		top_model_begin(m, 1.0);
		add(m, task(10, 11, "w", (uint64_t)i, 0, 1));
		sample(m, 10, 11, (uint64_t)i, F_BUSY, 0x2000);
		sample(m, 10, 11, (uint64_t)i, F_BUSY, 0x2000 + (uint64_t)i);
		assert_int_equal(top_model_end(m), 0);
	}
	assert_int_equal(top_model_stacks(m, 10, 11, 1, &st, &total), 2);
	assert_int_equal(total, 2);
	/* Only the last 4 intervals are kept, whatever is asked. */
	assert_int_equal(top_model_stacks(m, 10, 11, 100, &st, &total), 5);
	assert_int_equal(total, 8);
	assert_int_equal(st[0].count, 4);
	assert_int_equal(st[0].frames[0], 0x2000);
	assert_int_equal(top_model_stacks(m, 10, 12, 4, &st, &total), 0);
	top_model_free(m);
}

/* Rates divide by the time between a row's two reads, not by the
 * snapshot's interval: a read delayed by load does not inflate them. */
static void test_rates_by_read_time(void **state)
{
	struct top_model *m = model(0);
	struct procstat_task t = task(10, 10, "main", 0, 0, 5);

	(void)state;
	top_model_begin(m, 0);
	t.read_ns = 1000000000;
	add(m, t);
	assert_int_equal(top_model_end(m), 0);
	/* The snapshot says 1 s went by, but this thread was read 2 s after
	 * its last read, and ran for those 2 s (200 ticks at 100 a second). */
	top_model_begin(m, 1.0);
	t.utime = 200;
	t.read_ns = 3000000000;
	add(m, t);
	assert_int_equal(top_model_end(m), 0);
	assert_true(fabs(top_model_find(m, 10, 10)->cpu_user - 100.0) < 0.01);
	top_model_free(m);

	/* Process mode: the whole-process ticks, one read, exited threads
	 * included, win over the sum of the live threads. */
	m = model(1);
	struct procstat_task whole = task(20, 20, "app", 0, 0, 5);
	top_model_begin(m, 0);
	whole.read_ns = 1000000000;
	assert_int_equal(top_model_add_process(m, &whole), 0);
	add(m, task(20, 20, "app", 0, 0, 5));
	add(m, task(20, 21, "worker", 50, 0, 6));
	assert_int_equal(top_model_end(m), 0);
	top_model_begin(m, 1.0);
	whole.utime = 150; /* a thread that exited ran 100 ticks */
	whole.read_ns = 2000000000;
	assert_int_equal(top_model_add_process(m, &whole), 0);
	add(m, task(20, 20, "app", 0, 0, 5));
	add(m, task(20, 21, "worker", 50, 0, 6));
	assert_int_equal(top_model_end(m), 0);
	assert_true(fabs(top_model_find(m, 20, 20)->cpu_user - 150.0) < 0.01);
	top_model_free(m);
}

/* Thread mode: what the live threads do not account for of the
 * process's ticks is its ended threads' row, with their samples. */
static void whole_of(struct top_model *m, pid_t pid, uint64_t utime, uint64_t s)
{
	struct procstat_task whole = task(pid, pid, "app", utime, 0, 5);

	whole.read_ns = s * 1000000000;
	assert_int_equal(top_model_add_process(m, &whole), 0);
}

/* pid 20's, after another's of a higher pid: -p takes any order. */
static void whole_at(struct top_model *m, uint64_t utime, uint64_t s)
{
	whole_of(m, 30, 7, s);
	whole_of(m, 20, utime, s);
}

static void test_ended_threads(void **state)
{
	struct top_model *m = model(0);
	const struct top_row *r;

	(void)state;
	top_model_begin(m, 0);
	whole_at(m, 50, 1);
	add(m, task(20, 20, "app", 0, 0, 5));
	add(m, task(20, 21, "worker", 50, 0, 6));
	assert_int_equal(top_model_end(m), 0);
	/* A thread started and ended between the reads, 50 ticks of CPU:
	 * never listed, but its samples came. */
	top_model_begin(m, 1.0);
	whole_at(m, 110, 2);
	add(m, task(20, 20, "app", 0, 0, 5));
	add(m, task(20, 21, "worker", 60, 0, 6));
	sample(m, 20, 22, 5, F_OTHER, 0x3000);
	sample(m, 20, 22, 6, F_OTHER, 0x3000);
	sample(m, 20, 21, 7, F_BUSY, 0x2000);
	assert_int_equal(top_model_end(m), 0);
	r = top_model_find(m, 20, TOP_ENDED_TID);
	assert_non_null(r);
	assert_string_equal(r->name, TOP_ENDED_NAME);
	assert_true(fabs(r->cpu_user - 50.0) < 0.01);
	assert_int_equal(r->samples, 2);
	assert_ptr_equal(r->hot, F_OTHER);
	assert_int_equal(r->nthreads, 0);
	assert_true(fabs(top_model_header(m)->cpu - 60.0) < 0.01);
	assert_int_equal(top_model_header(m)->threads, 2);
	const struct top_stack *st;
	uint64_t total;
	assert_int_equal(top_model_stacks(m, 20, TOP_ENDED_TID, 1, &st, &total), 1);
	assert_int_equal(total, 2);
	/* The live threads account for it all: no such row. */
	top_model_begin(m, 1.0);
	whole_at(m, 120, 3);
	add(m, task(20, 20, "app", 0, 0, 5));
	add(m, task(20, 21, "worker", 70, 0, 6));
	assert_int_equal(top_model_end(m), 0);
	assert_null(top_model_find(m, 20, TOP_ENDED_TID));
	/* A thread listed before is gone: its last 3 ticks are the row's. */
	top_model_begin(m, 1.0);
	whole_at(m, 123, 4);
	add(m, task(20, 20, "app", 0, 0, 5));
	assert_int_equal(top_model_end(m), 0);
	r = top_model_find(m, 20, TOP_ENDED_TID);
	assert_non_null(r);
	assert_true(fabs(r->cpu_user - 3.0) < 0.01);
	top_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rates_and_hot), cmocka_unit_test(test_reused_tid),
	    cmocka_unit_test(test_process_rows),  cmocka_unit_test(test_view),
	    cmocka_unit_test(test_stack_history), cmocka_unit_test(test_rates_by_read_time),
	    cmocka_unit_test(test_ended_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
