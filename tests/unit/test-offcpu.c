/*
 * Unit tests of off-CPU time: a switch out and the switch in that follows
 * give one stack, marked, weighted by the time between; a preemption is
 * marked runnable; a thread attached while waiting gets its lead-in (or
 * the whole recording) under the marker alone; a thread created meanwhile
 * gets none; an exit forgets what was pending; the end weighs what is
 * still pending. And the reasons the function names of a stack give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "profile/aggregate.h"
#include "profile/offcpu-reason.h"
#include "sampling/offcpu.h"

#define START 1000000

/* The entry of tid whose leaf frame is leaf; fails if there is none. */
static const struct agg_stack *entry(struct aggregate *a, uint32_t tid, uint64_t leaf)
{
	for (size_t i = 0; i < aggregate_nstacks(a); i++) {
		const struct agg_stack *s = aggregate_stack(a, i);
		if (s->tid == tid && s->nframes && s->frames[0] == leaf)
			return s;
	}
	fail_msg("no stack of tid %u with leaf %#llx", tid, (unsigned long long)leaf);
	return NULL;
}

static void test_out_then_in(void **state)
{
	struct aggregate *a = aggregate_new();
	struct offcpu *o = offcpu_new(a);
	uint64_t frames[] = {0x1000, 0x2000};

	(void)state;
	offcpu_set_start(o, START);
	assert_int_equal(offcpu_out(o, 7, 8, START + 100, frames, 2), 0);
	offcpu_in(o, 7, 8, START + 350);
	offcpu_in(o, 7, 8, START + 400); /* a second in: nothing pending */
	assert_int_equal(aggregate_nstacks(a), 1);
	const struct agg_stack *s = entry(a, 8, OFFCPU_MARK_WAIT);
	assert_int_equal(s->period, 250);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->nframes, 3);
	assert_int_equal(s->frames[1], 0x1000);
	assert_int_equal(s->frames[2], 0x2000);

	/* Preempted: runnable. */
	assert_int_equal(offcpu_out(o, 7, 8, START + 500, frames, 2), 0);
	offcpu_preempted(o, 8);
	offcpu_in(o, 7, 8, START + 510);
	assert_int_equal(entry(a, 8, OFFCPU_MARK_RUNNABLE)->period, 10);

	struct offcpu_stats st;
	offcpu_get_stats(o, &st);
	assert_int_equal(st.switches, 2);
	assert_int_equal(st.ns, 260);
	offcpu_free(o);
	aggregate_free(a);
}

static void test_lead_in_and_end(void **state)
{
	struct aggregate *a = aggregate_new();
	struct offcpu *o = offcpu_new(a);
	uint64_t frames[] = {0x1000};

	(void)state;
	assert_int_equal(offcpu_attached(o, 7, 8), 0);	/* waiting, comes back */
	assert_int_equal(offcpu_attached(o, 7, 9), 0);	/* waiting all along */
	assert_int_equal(offcpu_attached(o, 7, 10), 0); /* running, then waits */
	offcpu_set_start(o, START);
	offcpu_in(o, 7, 8, START + 40);
	assert_int_equal(offcpu_out(o, 7, 10, START + 60, frames, 1), 0);
	offcpu_new_thread(o, 7, 11); /* created, runs, exits while pending */
	offcpu_in(o, 7, 11, START + 70);
	assert_int_equal(offcpu_out(o, 7, 11, START + 80, frames, 1), 0);
	offcpu_exit(o, 11);
	assert_int_equal(aggregate_nstacks(a), 1);
	offcpu_finish(o, START + 1000);

	const struct agg_stack *s = entry(a, 8, OFFCPU_MARK_BEFORE);
	assert_int_equal(s->period, 40);
	assert_int_equal(s->nframes, 1);
	assert_int_equal(entry(a, 9, OFFCPU_MARK_BEFORE)->period, 1000);
	assert_int_equal(entry(a, 10, OFFCPU_MARK_WAIT)->period, 940);
	for (size_t i = 0; i < aggregate_nstacks(a); i++)
		assert_int_not_equal(aggregate_stack(a, i)->tid, 11);
	assert_int_equal(aggregate_nstacks(a), 3);
	offcpu_free(o);
	aggregate_free(a);
}

static void test_reasons(void **state)
{
	const char *sleep_k[] = {"schedule", "do_nanosleep", "hrtimer_nanosleep", "nap"};
	const char *poll_k[] = {"schedule", "schedule_hrtimeout_range", "ep_poll", "do_epoll_wait"};
	const char *futex_k[] = {"__schedule", "schedule", "futex_wait_queue", "futex_wait"};
	const char *user_lock[] = {"__lll_lock_wait", "___pthread_mutex_lock", "take_lock"};
	const char *user_read[] = {"__GI___libc_read", "wait_pipe"};
	const char *not_io[] = {"readdir_worker", "pthread_create"};
	const char *go_nap[] = {"runtime/internal/syscall.Syscall6", "syscall.Syscall",
				"syscall.Nanosleep", "main.napGo"};
	const char *wait_k[] = {"schedule", "do_wait", "kernel_wait4"};

	(void)state;
	assert_string_equal(offcpu_reason(sleep_k, 4), "sleep");
	assert_string_equal(offcpu_reason(poll_k, 4), "io");
	assert_string_equal(offcpu_reason(futex_k, 4), "lock");
	assert_string_equal(offcpu_reason(user_lock, 3), "lock");
	assert_string_equal(offcpu_reason(user_read, 2), "io");
	assert_string_equal(offcpu_reason(not_io, 2), "other");
	assert_string_equal(offcpu_reason(go_nap, 4), "sleep"); /* without kernel frames */
	assert_string_equal(offcpu_reason(wait_k, 3), "wait");
	assert_string_equal(offcpu_reason(NULL, 0), "other");
	assert_string_equal(offcpu_frame_name(OFFCPU_MARK_WAIT, "lock"), "[off-CPU: lock]");
	assert_string_equal(offcpu_frame_name(OFFCPU_MARK_RUNNABLE, "lock"), "[off-CPU: runnable]");
	assert_string_equal(offcpu_frame_name(OFFCPU_MARK_BEFORE, NULL),
			    "[off-CPU: before the recording]");
	assert_true(offcpu_is_mark(OFFCPU_MARK_WAIT));
	assert_false(offcpu_is_mark(0xffffffffffffff80ULL)); /* PERF_CONTEXT_KERNEL */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_out_then_in),
	    cmocka_unit_test(test_lead_in_and_end),
	    cmocka_unit_test(test_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
