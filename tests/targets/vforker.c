/*
 * A target with a thread that cannot stop: its second thread vforks a
 * child that never execs, so the thread waits in the kernel, where no
 * ptrace interrupt reaches it, until the child ends. For the test that
 * recce gives up on stopping such a process, says why, and leaves it
 * running unchanged.
 *
 *   vforker
 *
 * Prints "vforker: child PID", then "vforker: ready"; its main thread
 * calls work() every millisecond until killed (kill the child first, or
 * with it: the child is in the same process group).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "ready.h"

static volatile long sink;

__attribute__((noinline)) void work(long i)
{
	sink = sink + i;
}

static void *stuck(void *arg)
{
	(void)arg;
	pid_t child = vfork();
	if (child == 0) {
		/* The parent thread waits until this child execs or exits:
		 * it does neither until it is killed. */
		for (;;)
			pause();
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&t, NULL, stuck, NULL);
	/* The child's pid, from outside: the thread cannot print it. */
	for (long i = 0;; i++) {
		work(i);
		if (i == 100)
			target_ready("vforker");
		usleep(1000);
	}
}
