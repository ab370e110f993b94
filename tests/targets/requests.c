/*
 * A target whose calls have known callees, for recce capture: a worker
 * thread calls handle(seq) every 30 ms; handle calls parse (2 ms on the
 * CPU), compute (6 ms) and reply (2 ms), and returns seq * 2. handle times
 * itself from its first statement to its last, and the worker prints
 * "handle SEQ NS RESULT" after each call. A second thread runs
 * background_work all along, outside any call: 2 ms on the CPU every
 * 20 ms, little enough to leave the worker a CPU of its own.
 *
 *   requests [SECONDS]   (default 60)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static unsigned long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Spins for ms of the thread's own CPU time, so that each callee's share
 * of the call's CPU samples is what it says, however often the thread
 * is preempted on a busy machine. */
__attribute__((noinline)) static void spin_ms(int ms)
{
	unsigned long long end =
	    clock_ns(CLOCK_THREAD_CPUTIME_ID) + (unsigned long long)ms * 1000000ull;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200; i++)
			sink = sink * 31 + (unsigned long)i;
}

__attribute__((noinline)) void parse(void)
{
	spin_ms(2);
}

__attribute__((noinline)) void compute(void)
{
	spin_ms(6);
}

__attribute__((noinline)) void reply(void)
{
	spin_ms(2);
}

static unsigned long long last_ns; /* handle's own time of its last call */

__attribute__((noinline)) long handle(int seq)
{
	unsigned long long t0 = now_ns();

	parse();
	compute();
	reply();
	last_ns = now_ns() - t0;
	return (long)seq * 2;
}

__attribute__((noinline)) static void background_work(void)
{
	struct timespec gap = {0, 18 * 1000000L};

	for (;;) {
		spin_ms(2);
		nanosleep(&gap, NULL);
	}
}

static void *background(void *arg)
{
	background_work();
	return arg;
}

static void *worker(void *arg)
{
	struct timespec gap = {0, 30 * 1000000L};

	for (int seq = 1;; seq++) {
		long r = handle(seq);
		printf("handle %d %llu %ld\n", seq, last_ns, r);
		fflush(stdout);
		nanosleep(&gap, NULL);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t w, b;

	pthread_create(&b, NULL, background, NULL);
	pthread_setname_np(b, "background");
	pthread_create(&w, NULL, worker, NULL);
	pthread_setname_np(w, "worker");
	sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 60);
	return 0;
}
