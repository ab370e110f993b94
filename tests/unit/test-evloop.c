/*
 * Unit tests of the one event loop (util/evloop): a ready pipe runs its
 * callback and only its own; EVLOOP_ONCE drops a source after one call
 * and EVLOOP_CLOSE closes it; a pidfd reports a real child's exit; a
 * wait with nothing ready ends at its deadline, not before; a signal
 * handler's interruption comes back as -EINTR; a callback may remove
 * another source. evloop_run(): a late periodic timer runs for every
 * period it missed, never before it is due; a one-shot timer runs once;
 * checks run after every wake and evloop_stop() ends the run with its
 * value; evloop_remove_arg() takes one engine out and leaves the other;
 * EVLOOP_WRITE wakes on room to write, and evloop_watch() changes what a
 * source waits for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/evloop.h"

struct seen {
	int calls;
	int last_fd;
	struct evloop *loop;
	int remove_fd; /* removed by the callback when >= 0 */
};

static void on_ready(void *arg, int fd, short revents)
{
	struct seen *s = arg;

	assert_true(revents & (POLLIN | POLLHUP));
	s->calls++;
	s->last_fd = fd;
	if (s->remove_fd >= 0)
		evloop_remove(s->loop, s->remove_fd);
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_ready_pipe(void **state)
{
	int a[2], b[2];
	struct evloop l;
	struct seen sa = {0, -1, NULL, -1}, sb = {0, -1, NULL, -1};

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	evloop_init(&l);
	assert_int_equal(evloop_add(&l, a[0], 0, on_ready, &sa), 0);
	assert_int_equal(evloop_add(&l, b[0], 0, on_ready, &sb), 0);
	assert_int_equal(evloop_add(&l, -1, 0, on_ready, &sb), 0); /* ignored */
	assert_int_equal(evloop_count(&l), 2);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 1);
	assert_int_equal(sa.calls, 0);
	assert_int_equal(sb.calls, 1);
	assert_int_equal(sb.last_fd, b[0]);
	/* Level-triggered: still readable, called again. */
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 1);
	assert_int_equal(sb.calls, 2);
	evloop_remove(&l, b[0]);
	assert_int_equal(evloop_count(&l), 1);
	assert_true(fd_is_open(b[0])); /* not the loop's to close */
	evloop_release(&l);
	assert_true(fd_is_open(a[0]));
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

static void test_once_and_close(void **state)
{
	int p[2];
	struct evloop l;
	struct seen s = {0, -1, NULL, -1};

	(void)state;
	assert_int_equal(pipe(p), 0);
	evloop_init(&l);
	assert_int_equal(evloop_add(&l, p[0], EVLOOP_ONCE | EVLOOP_CLOSE, on_ready, &s), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 1);
	assert_int_equal(s.calls, 1);
	assert_int_equal(evloop_count(&l), 0);
	assert_false(fd_is_open(p[0]));
	/* Nothing left to wait on: the cap ends the wait. */
	assert_int_equal(evloop_wait(&l, INT64_MAX, 10), 0);
	assert_int_equal(s.calls, 1);
	evloop_release(&l);
	close(p[1]);
}

static void test_pidfd_exit(void **state)
{
	struct evloop l;
	struct seen s = {0, -1, NULL, -1};

	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(20000);
		_exit(0);
	}
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(fd >= 0);
	evloop_init(&l);
	assert_int_equal(evloop_add(&l, fd, EVLOOP_ONCE | EVLOOP_CLOSE, on_ready, &s), 0);
	while (s.calls == 0)
		assert_true(evloop_wait(&l, INT64_MAX, 5000) >= 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.last_fd, fd);
	assert_int_equal(evloop_count(&l), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	evloop_release(&l);
}

static void test_deadline(void **state)
{
	int p[2];
	struct evloop l;
	struct seen s = {0, -1, NULL, -1};

	(void)state;
	assert_int_equal(pipe(p), 0);
	evloop_init(&l);
	assert_int_equal(evloop_add(&l, p[0], 0, on_ready, &s), 0);
	int64_t start = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	int64_t deadline = start + 30 * 1000000LL;
	while (evloop_wait(&l, deadline, -1) == 0 &&
	       (int64_t)time_now_ns(CLOCK_MONOTONIC) < deadline)
		;
	assert_true((int64_t)time_now_ns(CLOCK_MONOTONIC) >= deadline);
	assert_int_equal(s.calls, 0);
	/* A deadline already past does not block. */
	assert_int_equal(evloop_wait(&l, start, -1), 0);
	evloop_release(&l);
	close(p[0]), close(p[1]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_eintr(void **state)
{
	int p[2];
	struct evloop l;
	struct sigaction sa;
	struct itimerval it = {{0, 0}, {0, 20000}};

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	assert_int_equal(pipe(p), 0);
	evloop_init(&l);
	assert_int_equal(evloop_add(&l, p[0], 0, NULL, NULL), 0);
	setitimer(ITIMER_REAL, &it, NULL);
	assert_int_equal(evloop_wait(&l, INT64_MAX, -1), -EINTR);
	evloop_release(&l);
	close(p[0]), close(p[1]);
}

static void test_remove_in_callback(void **state)
{
	int a[2], b[2];
	struct evloop l;
	struct seen sa = {0, -1, &l, -1}, sb = {0, -1, NULL, -1};

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	evloop_init(&l);
	sa.remove_fd = b[0];
	assert_int_equal(evloop_add(&l, a[0], 0, on_ready, &sa), 0);
	assert_int_equal(evloop_add(&l, b[0], EVLOOP_CLOSE, on_ready, &sb), 0);
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 2);
	/* a's callback removed b before b's turn came. */
	assert_int_equal(sa.calls, 1);
	assert_int_equal(sb.calls, 0);
	assert_int_equal(evloop_count(&l), 1);
	evloop_release(&l);
	close(a[0]), close(a[1]), close(b[1]);
}

struct ticks {
	struct evloop *loop;
	int64_t due[16];
	int64_t at[16]; /* when each ran */
	int n, stop_after;
};

static void on_tick(void *arg, int64_t due)
{
	struct ticks *t = arg;

	t->due[t->n] = due;
	t->at[t->n] = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	if (++t->n == t->stop_after)
		evloop_stop(t->loop, 7);
}

static void test_timers(void **state)
{
	struct evloop l;
	struct ticks per = {&l, {0}, {0}, 0, 9}, once = {&l, {0}, {0}, 0, 0};
	int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	int64_t period = 10000000; /* 10 ms */

	(void)state;
	evloop_init(&l);
	/* Five periods late: each missed one runs, none skipped. */
	assert_true(evloop_timer_add(&l, now - 5 * period, period, on_tick, &per) > 0);
	int id = evloop_timer_add(&l, now + 2 * period, 0, on_tick, &once);
	assert_true(id > 0);
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(per.n, 9);
	for (int i = 0; i < per.n; i++) {
		assert_int_equal(per.due[i], now - 5 * period + i * period);
		assert_true(per.at[i] >= per.due[i]); /* never early */
	}
	/* The one-shot timer was due before the ninth tick: it ran once. */
	assert_int_equal(once.n, 1);
	assert_int_equal(once.due[0], now + 2 * period);
	assert_true(once.at[0] >= once.due[0]);
	evloop_timer_remove(&l, id); /* gone already: ignored */
	evloop_release(&l);
}

static void count_round(void *arg)
{
	(*(int *)arg)++;
}

static void stop_at_tick(void *arg, int64_t due)
{
	(void)due;
	evloop_stop(arg, 3);
}

static void test_late_wake_skips(void **state)
{
	struct evloop l;
	int rounds = 0;
	int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	int64_t hour = 3600 * 1000000000LL;

	(void)state;
	evloop_init(&l);
	/* A wake-only tick five periods late wakes the loop once, not five
	 * times: the next round waits for the stopper. */
	assert_true(evloop_timer_add(&l, now - 5 * hour, hour, NULL, &rounds) > 0);
	assert_true(evloop_timer_add(&l, now + 20000000, 0, stop_at_tick, &l) > 0);
	assert_int_equal(evloop_check_add(&l, count_round, &rounds), 0);
	assert_int_equal(evloop_run(&l), 3);
	assert_in_range(rounds, 1, 2);
	evloop_release(&l);
}

struct engine {
	struct evloop *loop;
	int fd;
	int reads, checks, ticks;
	int leave_at, stop_at; /* at this check: remove own, or stop the loop */
};

static void engine_read(void *arg, int fd, short revents)
{
	struct engine *e = arg;

	(void)fd;
	assert_true(revents & POLLIN);
	e->reads++;
}

static void engine_tick(void *arg, int64_t due)
{
	(void)due;
	((struct engine *)arg)->ticks++;
}

static void engine_check(void *arg)
{
	struct engine *e = arg;

	if (++e->checks == e->leave_at)
		evloop_remove_arg(e->loop, e);
	if (e->checks == e->stop_at)
		evloop_stop(e->loop, 42);
}

static void test_checks_stop_and_leave(void **state)
{
	int a[2], b[2];
	struct evloop l;
	struct engine ea = {&l, -1, 0, 0, 0, 1, 0}, eb = {&l, -1, 0, 0, 0, 0, 3};

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	evloop_init(&l);
	/* Both pipes stay readable: every round wakes at once. */
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(evloop_add(&l, a[0], EVLOOP_CLOSE, engine_read, &ea), 0);
	assert_int_equal(evloop_add(&l, b[0], 0, engine_read, &eb), 0);
	int64_t later = (int64_t)time_now_ns(CLOCK_MONOTONIC) + 3600 * 1000000000LL;
	assert_true(evloop_timer_add(&l, later, 0, engine_tick, &ea) > 0);
	assert_true(evloop_timer_add(&l, 0, 0, engine_tick, &eb) > 0); /* due now */
	assert_int_equal(evloop_check_add(&l, engine_check, &ea), 0);
	assert_int_equal(evloop_check_add(&l, engine_check, &eb), 0);
	assert_int_equal(evloop_run(&l), 42);
	assert_true(evloop_stopped(&l));
	/* a left after its first round: its descriptor closed, its timer gone. */
	assert_int_equal(ea.reads, 1);
	assert_int_equal(ea.checks, 1);
	assert_false(fd_is_open(a[0]));
	assert_int_equal(evloop_count(&l), 1);
	/* b went on for three rounds; its one-shot timer ran in the first. */
	assert_int_equal(eb.reads, 3);
	assert_int_equal(eb.checks, 3);
	assert_int_equal(eb.ticks, 1);
	assert_int_equal(ea.ticks, 0);
	/* Another stop does not change the value. */
	evloop_stop(&l, 1);
	assert_int_equal(evloop_run(&l), 42);
	evloop_release(&l);
	assert_true(fd_is_open(b[0]));
	close(a[1]), close(b[0]), close(b[1]);
}

/* An engine in a seat: leaves by itself after its second check. */
struct seated {
	struct evloop_seat seat;
	struct evloop *loop;
	int checks, told;
};

static void seated_check(void *arg)
{
	struct seated *e = arg;

	if (++e->checks == 2) {
		evloop_leave(&e->seat, e, 1);
		evloop_leave(&e->seat, e, 1); /* a second leave: nothing */
	}
}

static void seated_done(void *arg)
{
	struct seated *e = arg;

	e->told++;
	evloop_stop(e->loop, 5);
}

static void test_seat(void **state)
{
	int p[2];
	struct evloop l;
	struct seated e = {{0}, &l, 0, 0}, quiet = {{0}, &l, 0, 0};

	(void)state;
	assert_int_equal(pipe(p), 0);
	evloop_init(&l);
	evloop_seat_take(&e.seat, &l, seated_done, &e);
	evloop_seat_take(&quiet.seat, &l, seated_done, &quiet);
	assert_true(evloop_seated(&e.seat));
	assert_int_equal(evloop_add(&l, p[0], 0, NULL, &e), 0);
	assert_int_equal(evloop_add(&l, p[1], EVLOOP_WRITE, NULL, &quiet), 0);
	assert_int_equal(evloop_check_add(&l, seated_check, &e), 0);
	assert_true(evloop_timer_add(&l, 0, 1000000, NULL, &e) > 0);
	assert_int_equal(evloop_run(&l), 5);
	/* Left by itself: told once, its source gone, the other's kept. */
	assert_int_equal(e.checks, 2);
	assert_int_equal(e.told, 1);
	assert_false(evloop_seated(&e.seat));
	assert_int_equal(evloop_count(&l), 1);
	/* Left by its owner, without a word: not told. */
	assert_true(evloop_seated(&quiet.seat));
	evloop_leave(&quiet.seat, &quiet, 0);
	assert_int_equal(quiet.told, 0);
	assert_false(evloop_seated(&quiet.seat));
	assert_int_equal(evloop_count(&l), 0);
	evloop_release(&l);
	close(p[0]), close(p[1]);
}

static void on_writable(void *arg, int fd, short revents)
{
	(void)fd;
	assert_true(revents & POLLOUT);
	(*(int *)arg)++;
}

static void test_write_interest(void **state)
{
	int p[2], n = 0;
	struct evloop l;

	(void)state;
	assert_int_equal(pipe(p), 0);
	evloop_init(&l);
	/* An empty pipe: its read end is not ready, its write end is. */
	assert_int_equal(evloop_add(&l, p[0], 0, on_writable, &n), 0);
	assert_int_equal(evloop_add(&l, p[1], EVLOOP_WRITE, on_writable, &n), 0);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 1);
	assert_int_equal(n, 1);
	/* The write end watched for input instead: nothing is ready. */
	assert_int_equal(evloop_watch(&l, p[1], POLLIN), 0);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 0), 0);
	/* And for both: ready again, for output. */
	assert_int_equal(evloop_watch(&l, p[1], POLLIN | POLLOUT), 0);
	assert_int_equal(evloop_wait(&l, INT64_MAX, 1000), 1);
	assert_int_equal(n, 2);
	assert_int_equal(evloop_watch(&l, 12345, POLLIN), -ENOENT);
	evloop_release(&l);
	close(p[0]), close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ready_pipe),	    cmocka_unit_test(test_once_and_close),
	    cmocka_unit_test(test_pidfd_exit),	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_eintr),	    cmocka_unit_test(test_remove_in_callback),
	    cmocka_unit_test(test_timers),	    cmocka_unit_test(test_checks_stop_and_leave),
	    cmocka_unit_test(test_write_interest),  cmocka_unit_test(test_seat),
	    cmocka_unit_test(test_late_wake_skips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
