/*
 * Unit tests of the lock forked processes share: a second process waits
 * (in futex(2)) while the first holds it, and takes it once the first
 * gives it; one whose holder died without giving it is taken all the
 * same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc-lock.h"

/* Waits until pid waits in futex(2) (202 on x86-64), or has ended. */
static void wait_blocked(pid_t pid)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (;;) {
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid)
			return;
		FILE *fp = fopen(path, "r");
		size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[n] = '\0';
		if (!strncmp(buf, "202 ", 4))
			return;
		sched_yield();
	}
}

/* A child that takes l and says 'y' on fd, then exits 0. */
static pid_t taker(struct proc_lock *l, int fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int ok = proc_lock_take(l) == 0;
		if (ok)
			proc_lock_give(l);
		_exit(write(fd, ok ? "y" : "n", 1) == 1 ? 0 : 1);
	}
	return pid;
}

static void test_waits_for_holder(void **state)
{
	struct proc_lock *l = proc_lock_new();
	int fds[2];
	char said[3] = "";
	int status;

	assert_non_null(l);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(proc_lock_take(l), 0);
	pid_t pid = taker(l, fds[1]);
	assert_true(pid > 0);
	/* The child says 'y' once it has the lock, so after this 'p'. */
	wait_blocked(pid);
	assert_int_equal(write(fds[1], "p", 1), 1);
	proc_lock_give(l);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(fds[0], said, 2), 2);
	assert_string_equal(said, "py");
	close(fds[0]);
	close(fds[1]);
	proc_lock_free(l);
}

static void test_dead_holder_passes_it_on(void **state)
{
	struct proc_lock *l = proc_lock_new();
	int status;

	assert_non_null(l);
	pid_t pid = fork();
	if (pid == 0)
		_exit(proc_lock_take(l) == 0 ? 0 : 1); /* dies holding it */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(proc_lock_take(l), 0);
	proc_lock_give(l);
	assert_int_equal(proc_lock_take(l), 0); /* and it is whole again */
	proc_lock_give(l);
	proc_lock_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_waits_for_holder),
	    cmocka_unit_test(test_dead_holder_passes_it_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
