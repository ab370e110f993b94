/*
 * Unit tests of the sample aggregator: distinct stacks are counted once,
 * periods add up, memory does not grow with repeated samples, exec starts
 * a new generation, and thread names follow the latest COMM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "profile/aggregate.h"

static void test_distinct_stacks(void **state)
{
	struct aggregate *a = aggregate_new();
	uint64_t s1[] = {0x1000, 0x2000, 0x3000};
	uint64_t s2[] = {0x1000, 0x2000};
	uint64_t s3[] = {0x1000, 0x2000, 0x3001};

	assert_non_null(a);
	assert_int_equal(aggregate_add(a, 10, 10, s1, 3, 100), 0);
	assert_int_equal(aggregate_add(a, 10, 10, s1, 3, 150), 0);
	assert_int_equal(aggregate_add(a, 10, 10, s2, 2, 100), 0); /* prefix: another stack */
	assert_int_equal(aggregate_add(a, 10, 10, s3, 3, 100), 0);
	assert_int_equal(aggregate_add(a, 10, 11, s1, 3, 100), 0); /* other thread */
	assert_int_equal(aggregate_add(a, 12, 12, s1, 3, 100), 0); /* other process */
	assert_int_equal(aggregate_nstacks(a), 5);

	const struct agg_stack *st = aggregate_stack(a, 0);
	assert_int_equal(st->count, 2);
	assert_int_equal(st->period, 250);
	assert_int_equal(st->nframes, 3);
	assert_memory_equal(st->frames, s1, sizeof(s1));
	assert_int_equal(st->pid, 10);
	assert_int_equal(st->tid, 10);
	assert_null(aggregate_stack(a, 5));

	struct aggregate_stats stats;
	aggregate_get_stats(a, &stats);
	assert_int_equal(stats.samples, 6);
	assert_int_equal(stats.period, 650);
	assert_int_equal(stats.stacks, 5);
	assert_int_equal(stats.threads, 3);
	aggregate_free(a);
}

static void test_empty_stack(void **state)
{
	struct aggregate *a = aggregate_new();

	assert_int_equal(aggregate_add(a, 1, 1, NULL, 0, 7), 0);
	assert_int_equal(aggregate_add(a, 1, 1, NULL, 0, 7), 0);
	assert_int_equal(aggregate_nstacks(a), 1);
	assert_int_equal(aggregate_stack(a, 0)->count, 2);
	aggregate_free(a);
}

/* A million samples of the same ten stacks: no new entries, no memory. */
static void test_memory_bounded(void **state)
{
	struct aggregate *a = aggregate_new();
	uint64_t frames[10][40];
	struct aggregate_stats before, after;

	for (int s = 0; s < 10; s++)
		for (int f = 0; f < 40; f++)
			frames[s][f] = 0x400000 + (uint64_t)s * 0x1000 + (uint64_t)f * 8;
	for (int s = 0; s < 10; s++)
		assert_int_equal(aggregate_add(a, 100, 100 + s % 3, frames[s], 40, 10101010), 0);
	aggregate_get_stats(a, &before);
	for (int i = 0; i < 1000000; i++) {
		int s = i % 10;
		assert_int_equal(aggregate_add(a, 100, 100 + s % 3, frames[s], 40, 10101010), 0);
	}
	aggregate_get_stats(a, &after);
	assert_int_equal(after.stacks, 10);
	assert_int_equal(after.bytes, before.bytes);
	assert_int_equal(after.samples, 1000010);
	assert_int_equal(after.period, 1000010ULL * 10101010ULL);
	uint64_t total = 0;
	for (size_t i = 0; i < aggregate_nstacks(a); i++)
		total += aggregate_stack(a, i)->count;
	assert_int_equal(total, 1000010);
	aggregate_free(a);
}

/* Many distinct stacks: the table grows and every entry is found again. */
static void test_many_stacks(void **state)
{
	struct aggregate *a = aggregate_new();

	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < 50000; i++) {
			uint64_t f[3] = {i, i * 7, 0xffffffffffffff80ULL};
			assert_int_equal(aggregate_add(a, 5, 6, f, 3, 1), 0);
		}
	assert_int_equal(aggregate_nstacks(a), 50000);
	for (size_t i = 0; i < aggregate_nstacks(a); i++)
		assert_int_equal(aggregate_stack(a, i)->count, 2);
	aggregate_free(a);
}

static void test_exec_generation(void **state)
{
	struct aggregate *a = aggregate_new();
	uint64_t f[] = {0x401000, 0x401100};

	assert_int_equal(aggregate_add(a, 20, 20, f, 2, 1), 0);
	assert_int_equal(aggregate_add(a, 20, 21, f, 2, 1), 0);
	assert_int_equal(aggregate_gen(a, 20), 0);
	assert_int_equal(aggregate_exec(a, 20), 0);
	assert_int_equal(aggregate_gen(a, 20), 1);
	assert_int_equal(aggregate_add(a, 20, 20, f, 2, 1), 0);
	/* A thread created after the exec belongs to the new generation. */
	assert_int_equal(aggregate_add(a, 20, 22, f, 2, 1), 0);
	assert_int_equal(aggregate_nstacks(a), 4);
	assert_int_equal(aggregate_stack(a, 0)->gen, 0);
	assert_int_equal(aggregate_stack(a, 2)->gen, 1);
	assert_int_equal(aggregate_stack(a, 3)->gen, 1);
	aggregate_free(a);
}

/* A window is over: the stacks and counts go, the names and the
 * generations stay, and the same stack makes a new entry. */
static void test_clear(void **state)
{
	struct aggregate *a = aggregate_new();
	uint64_t f[] = {0x401000, 0x401100};
	struct aggregate_stats st;

	assert_int_equal(aggregate_set_thread(a, 40, 40, "server"), 0);
	assert_int_equal(aggregate_add(a, 40, 40, f, 2, 5), 0);
	assert_int_equal(aggregate_exec(a, 40), 0);
	assert_int_equal(aggregate_add(a, 40, 40, f, 2, 5), 0);
	aggregate_clear(a);
	aggregate_get_stats(a, &st);
	assert_int_equal(aggregate_nstacks(a), 0);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.period, 0);
	assert_int_equal(st.threads, 0);
	assert_int_equal(aggregate_gen_stacks(a, 40), 0);
	assert_string_equal(aggregate_thread_name(a, 40), "server");
	assert_int_equal(aggregate_gen(a, 40), 1);
	assert_int_equal(aggregate_add(a, 40, 40, f, 2, 7), 0);
	assert_int_equal(aggregate_add(a, 40, 40, f, 2, 7), 0);
	assert_int_equal(aggregate_nstacks(a), 1);
	assert_int_equal(aggregate_stack(a, 0)->count, 2);
	assert_int_equal(aggregate_stack(a, 0)->period, 14);
	assert_int_equal(aggregate_stack(a, 0)->gen, 1);
	aggregate_free(a);
}

/* gone(): threads 51 and 52 of process 50 have exited, 60 too. */
static int gone_51_52_60(void *arg, pid_t pid, pid_t tid)
{
	int *asked = arg;
	(*asked)++;
	return tid == 51 || tid == 52 || pid == 60;
}

/* Between windows, the threads gone go once a window has passed without
 * their samples; the others keep their names and generations. */
static void test_drop_threads(void **state)
{
	struct aggregate *a = aggregate_new();
	uint64_t f[] = {0x401000};
	int asked = 0;

	assert_int_equal(aggregate_set_thread(a, 50, 50, "main"), 0);
	assert_int_equal(aggregate_set_thread(a, 50, 51, "idle"), 0);
	assert_int_equal(aggregate_set_thread(a, 50, 52, "busy"), 0);
	assert_int_equal(aggregate_set_thread(a, 60, 60, "other"), 0);
	assert_int_equal(aggregate_set_thread(a, 70, 70, "alive"), 0);
	assert_int_equal(aggregate_exec(a, 70), 0);
	assert_int_equal(aggregate_add(a, 50, 52, f, 1, 1), 0);
	aggregate_clear(a);
	/* 52 was sampled in the window just over: it stays one more. */
	assert_int_equal(aggregate_drop_threads(a, gone_51_52_60, &asked), 2);
	assert_null(aggregate_thread_name(a, 51));
	assert_null(aggregate_thread_name(a, 60));
	assert_string_equal(aggregate_thread_name(a, 52), "busy");
	assert_string_equal(aggregate_thread_name(a, 50), "main");
	assert_string_equal(aggregate_thread_name(a, 70), "alive");
	assert_int_equal(aggregate_gen(a, 70), 1);
	aggregate_clear(a);
	assert_int_equal(aggregate_drop_threads(a, gone_51_52_60, &asked), 1);
	assert_null(aggregate_thread_name(a, 52));
	assert_string_equal(aggregate_thread_name(a, 70), "alive");
	/* A new thread after the drops is found by its tid. */
	assert_int_equal(aggregate_set_thread(a, 80, 81, "new"), 0);
	assert_string_equal(aggregate_thread_name(a, 81), "new");
	assert_string_equal(aggregate_thread_name(a, 50), "main");
	aggregate_free(a);
}

static void test_thread_names(void **state)
{
	struct aggregate *a = aggregate_new();

	assert_null(aggregate_thread_name(a, 30));
	assert_int_equal(aggregate_set_thread(a, 30, 30, "server"), 0);
	assert_int_equal(aggregate_set_thread(a, 30, 31, "worker-1"), 0);
	assert_string_equal(aggregate_thread_name(a, 30), "server");
	assert_string_equal(aggregate_thread_name(a, 31), "worker-1");
	/* A COMM record renames the thread. */
	assert_int_equal(aggregate_set_thread(a, 30, 31, "late-7"), 0);
	assert_string_equal(aggregate_thread_name(a, 31), "late-7");
	/* NULL keeps the name; over-long names (a Python thread's may be
	 * longer than the kernel's 15 bytes) are cut to AGG_COMM_LEN - 1. */
	assert_int_equal(aggregate_set_thread(a, 30, 31, NULL), 0);
	assert_string_equal(aggregate_thread_name(a, 31), "late-7");
	assert_int_equal(aggregate_set_thread(a, 30, 32, "ThreadPoolExecutor-0_0"), 0);
	assert_string_equal(aggregate_thread_name(a, 32), "ThreadPoolExecutor-0_0");
	char longer[AGG_COMM_LEN + 8];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	assert_int_equal(aggregate_set_thread(a, 30, 33, longer), 0);
	assert_int_equal(strlen(aggregate_thread_name(a, 33)), AGG_COMM_LEN - 1);
	/* Many threads: the table grows, names survive. */
	for (int t = 1000; t < 3000; t++)
		assert_int_equal(aggregate_set_thread(a, 30, t, "pool"), 0);
	assert_string_equal(aggregate_thread_name(a, 31), "late-7");
	assert_string_equal(aggregate_thread_name(a, 2999), "pool");
	/* A new thread named after its creator, while the table grows. */
	for (int t = 3000; t < 5000; t++)
		assert_int_equal(aggregate_set_thread(a, 30, t, aggregate_thread_name(a, t - 1)),
				 0);
	assert_string_equal(aggregate_thread_name(a, 4999), "pool");
	/* Threads without samples are not busy. */
	struct aggregate_stats st;
	aggregate_get_stats(a, &st);
	assert_int_equal(st.threads, 0);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_distinct_stacks), cmocka_unit_test(test_empty_stack),
	    cmocka_unit_test(test_memory_bounded),  cmocka_unit_test(test_many_stacks),
	    cmocka_unit_test(test_exec_generation), cmocka_unit_test(test_thread_names),
	    cmocka_unit_test(test_clear), cmocka_unit_test(test_drop_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
