/*
 * Unit tests of the /proc parsers: a stat line whose name holds spaces and
 * parentheses, truncated and empty files (a thread that vanished while it
 * was read), status, /proc/stat, loadavg, meminfo and uptime, and the
 * readers on this very process: with files kept open, a kept file read
 * again is read afresh, a thread that ended reads as gone and its file is
 * closed, and a sweep closes what was not read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc/procstat.h"

static const char STAT[] =
    "4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 3 0 98765 "
    "10000000 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

static void test_stat_name_with_parentheses(void **state)
{
	struct procstat_task t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(procstat_parse_stat(STAT, strlen(STAT), &t), 0);
	assert_int_equal(t.tid, 4242);
	assert_string_equal(t.comm, "a (b) c");
	assert_int_equal(t.state, 'R');
	assert_int_equal(t.utime, 1234);
	assert_int_equal(t.stime, 567);
	assert_int_equal(t.num_threads, 3);
	assert_int_equal(t.starttime, 98765);
	assert_int_equal(t.rss_pages, 321);
}

static void test_stat_truncated(void **state)
{
	struct procstat_task t;

	(void)state;
	/* Every prefix short of the rss field is refused, never half-read. */
	const char *rss = strstr(STAT, " 321 ");
	for (size_t len = 0; len < (size_t)(rss - STAT) + 1; len++)
		assert_int_equal(procstat_parse_stat(STAT, len, &t), -EINVAL);
	assert_int_equal(procstat_parse_stat("", 0, &t), -EINVAL);
}

static void test_stat_long_name_is_cut(void **state)
{
	static const char line[] = "7 (abcdefghijklmnopqrstuvwxyz) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 "
				   "20 0 1 0 77 0 9 0\n";
	struct procstat_task t;

	(void)state;
	assert_int_equal(procstat_parse_stat(line, strlen(line), &t), 0);
	assert_int_equal(strlen(t.comm), PROCSTAT_COMM_LEN - 1);
	assert_int_equal(t.rss_pages, 9);
}

static void test_status(void **state)
{
	static const char text[] = "Name:\tbusy\nTgid:\t4242\nPid:\t4243\n"
				   "voluntary_ctxt_switches:\t17\n"
				   "nonvoluntary_ctxt_switches:\t5\n";
	struct procstat_task t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(procstat_parse_status(text, strlen(text), &t), 0);
	assert_int_equal(t.pid, 4242);
	assert_int_equal(t.vcsw, 17);
	assert_int_equal(t.ivcsw, 5);
	assert_int_equal(procstat_parse_status("Name:\tx\n", 8, &t), -EINVAL);
}

static void test_system_files(void **state)
{
	static const char stat[] = "cpu  10 1 20 300 4 0 5 0 0 0\n"
				   "cpu0 5 0 10 150 2 0 2 0 0 0\n"
				   "cpu1 5 1 10 150 2 0 3 0 0 0\n"
				   "intr 1 2 3\nctxt 9999\nbtime 1\n";
	static const char mem[] = "MemTotal:       1000 kB\nMemFree:  10 kB\n"
				  "MemAvailable:    600 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n";
	static struct procstat_system s;
	double load[3], up;

	(void)state;
	assert_int_equal(procstat_parse_cpus(stat, strlen(stat), &s), 0);
	assert_int_equal(s.ncpus, 2);
	assert_int_equal(s.total.user, 10);
	assert_int_equal(s.cpu[1].softirq, 3);
	assert_int_equal(s.ctxt, 9999);
	assert_int_equal(procstat_cpu_busy(&s.total), 10 + 1 + 20 + 5);
	assert_int_equal(procstat_cpu_all(&s.total), 36 + 300 + 4);
	assert_int_equal(procstat_parse_cpus("intr 1\n", 7, &s), -EINVAL);

	assert_int_equal(procstat_parse_meminfo(mem, strlen(mem), &s), 0);
	assert_int_equal(s.mem_total_kb, 1000);
	assert_int_equal(s.mem_available_kb, 600);

	assert_int_equal(procstat_parse_loadavg("0.52 1.25 10.00 2/300 4242\n", 27, load), 0);
	assert_true(load[0] > 0.519 && load[0] < 0.521);
	assert_true(load[2] > 9.99 && load[2] < 10.01);
	assert_int_equal(procstat_parse_loadavg("0.52", 4, load), -EINVAL);
	assert_int_equal(procstat_parse_uptime("123.45 67.0\n", 12, &up), 0);
	assert_true(up > 123.44 && up < 123.46);
}

static void test_read_self(void **state)
{
	struct procstat_reader r;
	struct procstat_task t;
	static struct procstat_system s;
	const pid_t *ids;

	(void)state;
	assert_int_equal(procstat_reader_init(&r, NULL), 0);
	assert_int_equal(procstat_read_task(&r, getpid(), getpid(), &t), 0);
	assert_int_equal(t.pid, getpid());
	assert_int_equal(t.tid, getpid());
	assert_int_equal(t.state, 'R');
	ssize_t n = procstat_list_tasks(&r, getpid(), &ids);
	assert_true(n >= 1);
	assert_int_equal(ids[0], getpid());
	assert_int_equal(procstat_read_system(&r, &s), 0);
	assert_true(s.ncpus >= 1);
	assert_true(s.mem_total_kb > 0);
	/* A task that does not exist reads as gone. */
	assert_int_equal(procstat_read_task(&r, 5000001, 5000001, &t), -ESRCH);
	assert_int_equal(procstat_list_tasks(&r, 5000001, &ids), -ESRCH);
	procstat_reader_release(&r);
}

/* A thread that says its id and waits to be let go. */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	int go;
};

static void *wait_to_go(void *arg)
{
	struct waiter *w = arg;

	pthread_mutex_lock(&w->lock);
	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&w->cond);
	while (!w->go)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Waits until the kernel has let go of thread tid, which pthread_join()
 * returns before (the thread's exit clears its tid first): until its
 * /proc directory is gone; fails after 60 s. */
static void wait_released(pid_t tid)
{
	char path[64];
	struct timespec start, now;

	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (access(path, F_OK) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 60)
			fail_msg("thread %d still in /proc 60 s after it ended", (int)tid);
		sched_yield();
	}
}

/* Spins this thread 20 ms of CPU at a time until r reads more than
 * ticks for it; fails after 5 s of CPU. */
static void spin_past(struct procstat_reader *r, uint64_t ticks)
{
	struct procstat_task t;

	for (int i = 0; i < 250; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
		assert_int_equal(procstat_read_task(r, getpid(), getpid(), &t), 0);
		if (t.utime + t.stime > ticks)
			return;
	}
	fail_msg("5 s of CPU, and the kept stat file still says %llu ticks",
		 (unsigned long long)ticks);
}

static void test_read_kept_open(void **state)
{
	struct procstat_reader r;
	struct procstat_task t, p;
	struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
	pthread_t th;

	(void)state;
	assert_int_equal(procstat_reader_init(&r, NULL), 0);
	procstat_reader_hold(&r, 64);
	assert_int_equal(pthread_create(&th, NULL, wait_to_go, &w), 0);
	pthread_mutex_lock(&w.lock);
	while (!w.tid)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);

	/* Two tasks' stat and status, and the process's stat: 5 files. */
	assert_int_equal(procstat_read_task(&r, getpid(), getpid(), &t), 0);
	assert_int_equal(procstat_read_task(&r, getpid(), w.tid, &t), 0);
	assert_int_equal(t.tid, w.tid);
	assert_int_equal(procstat_read_process(&r, getpid(), &p), 0);
	assert_int_equal(procstat_reader_held(&r), 5);

	/* A kept file read again, not opened again (a read from its start
	 * leaves where the descriptor stands alone), says what is true now. */
	int fd = r.held[0].fd[0];
	assert_int_equal(r.held[0].tid, getpid());
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(procstat_read_task(&r, getpid(), getpid(), &t), 0);
	uint64_t before = t.utime + t.stime;
	spin_past(&r, before);
	assert_int_equal(r.held[0].fd[0], fd);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	assert_int_equal(procstat_reader_held(&r), 5);

	/* The thread ends: its kept files read as nothing, it is gone,
	 * and they are closed. */
	pthread_mutex_lock(&w.lock);
	w.go = 1;
	pthread_cond_broadcast(&w.cond);
	pthread_mutex_unlock(&w.lock);
	pthread_join(th, NULL);
	wait_released(w.tid);
	assert_int_equal(procstat_read_task(&r, getpid(), w.tid, &t), -ESRCH);
	assert_int_equal(procstat_reader_held(&r), 3);

	/* A sweep keeps what was read since the last one, then closes the
	 * rest at the next. */
	procstat_reader_sweep(&r);
	assert_int_equal(procstat_reader_held(&r), 3);
	assert_int_equal(procstat_read_process(&r, getpid(), &p), 0);
	procstat_reader_sweep(&r);
	assert_int_equal(procstat_reader_held(&r), 1);
	procstat_reader_sweep(&r);
	assert_int_equal(procstat_reader_held(&r), 0);

	/* No more than asked for: past it, files are opened and closed. */
	procstat_reader_hold(&r, 1);
	assert_int_equal(procstat_read_task(&r, getpid(), getpid(), &t), 0);
	assert_int_equal(t.tid, getpid());
	assert_int_equal(procstat_reader_held(&r), 1);
	procstat_reader_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat_name_with_parentheses),
	    cmocka_unit_test(test_stat_truncated),
	    cmocka_unit_test(test_stat_long_name_is_cut),
	    cmocka_unit_test(test_status),
	    cmocka_unit_test(test_system_files),
	    cmocka_unit_test(test_read_self),
	    cmocka_unit_test(test_read_kept_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
