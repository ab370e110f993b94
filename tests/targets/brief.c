/*
 * A target whose work is done by brief threads, as a server that starts a
 * thread per request does: each thread runs brief_work() for 8 ms of its
 * own CPU time and ends, and the next starts; the main thread only waits
 * for each. A thread shorter than a sampling period of CPU time (10.1 ms
 * at 99 Hz) is never sampled, as the kernel samples each thread by its
 * own CPU time.
 *
 *   brief [SECONDS]
 *
 * Prints "ready" once the first thread has ended, and runs for SECONDS
 * (default 60) of wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORK_NS 8000000ull

static volatile unsigned long sink;

static unsigned long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static void *brief_work(void *arg)
{
	unsigned long long start = now_ns(CLOCK_THREAD_CPUTIME_ID);

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - start < WORK_NS)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 60.0;
	unsigned long long end = now_ns(CLOCK_MONOTONIC) + (unsigned long long)(seconds * 1e9);

	for (int n = 0; now_ns(CLOCK_MONOTONIC) < end; n++) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief_work, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (n == 0) {
			printf("ready\n");
			fflush(stdout);
		}
	}
	return 0;
}
