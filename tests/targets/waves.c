/*
 * A target whose threads come and go one after another, for the test
 * that trace --fast follows more threads over a trace than it has rings:
 * a thread that ended leaves its ring to the next.
 *
 *   waves [THREADS] [CALLS]
 *
 * Prints "waves: ready" and waits for SIGUSR1 (sent once a tracer is in),
 * then THREADS times (default 200) starts a thread that calls step(i) for
 * i = 0..CALLS-1 (default 10) and joins it, prints "waves: done" and
 * exits.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "ready.h"

static volatile long sink;
static long calls = 10;

__attribute__((noinline)) long step(long i)
{
	return sink += i;
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++)
		step(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 200;
	calls = argc > 2 ? atol(argv[2]) : 10;
	target_ready("waves");
	target_wait_go();
	for (long t = 0; t < threads; t++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL) != 0) {
			perror("waves: pthread_create");
			return 1;
		}
		pthread_join(th, NULL);
	}
	printf("waves: done\n");
	return 0;
}
