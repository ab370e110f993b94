/*
 * A target whose children and grandchildren call a function from their
 * first moments, for the test that trace follows the processes a target
 * creates from their first instruction.
 *
 *   forker [CHILDREN] [CALLS] [alloc]
 *
 * Prints "forker: ready" and waits for SIGUSR1 (sent once a tracer is in),
 * then CHILDREN times (default 50) forks a child that calls step(i) for
 * i = 0..CALLS-1 (default 5), forks a grandchild that does the same, waits
 * for it and exits; waits for each child, prints "forker: done", and
 * exits at the next SIGUSR1. The parent itself never calls step().
 *
 * With alloc, each child instead prints "child PID", waits for a SIGUSR1
 * of its own (sent once the test sees it probed), then allocates and
 * frees 256 KiB 1,000 times, and makes no grandchild.
 *
 * With exec, the parent first forks EXECS (300) children, one after
 * another, that run another program (cat, reading a pipe only the parent
 * writes to, so that each lives until the parent is gone); then 5 that
 * call step(0) once, print "forker: called" and wait; at the next SIGUSR1
 * those run cat too; once they have, the children as above.
 */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ready.h"

static volatile long sink;
static int alloc_mode;

__attribute__((noinline)) long step(long i)
{
	return sink += i;
}

static void calls(long n)
{
	for (long i = 0; i < n; i++)
		step(i);
}

/* Forks a process that makes n calls and exits; waits for it. */
static int spawn(long n, int depth)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		perror("forker: fork");
		return -1;
	}
	if (pid == 0 && alloc_mode) {
		printf("child %d\n", (int)getpid());
		target_wait_go();
		for (int i = 0; i < 1000; i++) {
			char *volatile p = malloc(256 << 10);
			if (p)
				p[0] = 1;
			free(p);
		}
		_exit(0);
	}
	if (pid == 0) {
		calls(n);
		_exit(depth > 1 && spawn(n, depth - 1) < 0 ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "forker: child %d failed\n", (int)pid);
		return -1;
	}
	return 0;
}

#define EXECS  300
#define CALLED 5

static int live[2]; /* the pipe the cats read: they end as this process does */
static int hold[2]; /* the pipe the callers wait on, until it is closed */

/* Forks a child that runs cat on live[0]; with call, after calling
 * step(0) and waiting for the end of hold. Returns the reading end of a
 * pipe that closes as the child runs cat (or dies), or -1. */
static int spawn_cat(int call)
{
	int done[2];
	char c;

	if (pipe2(done, O_CLOEXEC) != 0) {
		perror("forker: pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("forker: fork");
		return -1;
	}
	if (pid == 0) {
		if (call) {
			step(0);
			close(hold[1]);
			if (read(hold[0], &c, 1) < 0)
				_exit(1);
		}
		dup2(live[0], 0);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(done[1]);
	return done[0];
}

/* Waits until the child behind a spawn_cat() pipe has run cat. */
static void wait_exec(int done)
{
	char c;

	while (read(done, &c, 1) > 0)
		;
	close(done);
}

static int spawn_execs(void)
{
	int done[CALLED];

	if (pipe2(live, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) {
		perror("forker: pipe");
		return -1;
	}
	for (int i = 0; i < EXECS; i++) {
		int d = spawn_cat(0);
		if (d < 0)
			return -1;
		wait_exec(d);
	}
	for (int i = 0; i < CALLED; i++)
		if ((done[i] = spawn_cat(1)) < 0)
			return -1;
	printf("forker: called\n");
	target_wait_go();
	close(hold[1]);
	for (int i = 0; i < CALLED; i++)
		wait_exec(done[i]);
	return 0;
}

int main(int argc, char **argv)
{
	long children = argc > 1 ? atol(argv[1]) : 50, n = argc > 2 ? atol(argv[2]) : 5;

	alloc_mode = argc > 3 && strcmp(argv[3], "alloc") == 0;
	int exec_mode = argc > 3 && strcmp(argv[3], "exec") == 0;
	target_ready("forker");
	target_wait_go();
	if (exec_mode && spawn_execs() < 0)
		return 1;
	for (long c = 0; c < children; c++)
		if (spawn(n, 2) < 0)
			return 1;
	printf("forker: done\n");
	target_wait_go();
	return 0;
}
