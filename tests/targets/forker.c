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
 */
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

int main(int argc, char **argv)
{
	long children = argc > 1 ? atol(argv[1]) : 50, n = argc > 2 ? atol(argv[2]) : 5;

	alloc_mode = argc > 3 && strcmp(argv[3], "alloc") == 0;
	target_ready("forker");
	target_wait_go();
	for (long c = 0; c < children; c++)
		if (spawn(n, 2) < 0)
			return 1;
	printf("forker: done\n");
	target_wait_go();
	return 0;
}
