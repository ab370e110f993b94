/*
 * A target that shows its own speed, for the tests that kill recce at
 * random moments: the target must run on, unstopped and unslowed.
 *
 *   spinner [SECONDS] [THREADS] [CHURN]
 *
 * THREADS threads (default 2, at most 256) call spin_step() in a tight
 * loop for SECONDS (default 30); every 50 ms the main thread prints "rate
 * N", the calls made in that window by all threads. A probe on spin_step
 * (a breakpoint trap per call) makes the rate fall a hundredfold or more,
 * so the lines show when probes came and went. With CHURN (default 0),
 * one more thread creates and joins threads as fast as it can, up to
 * CHURN a second, each calling spin_step 1,000 times, and the line reads
 * "rate N threads M". After a SIGUSR2 each thread calls spin_step once
 * every 500 ms only (the main thread says "slow" at its next line).
 * Prints "spinner: done" at the end.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_ulong calls, born;
static atomic_int stop;
static volatile sig_atomic_t slow;
static double churn_rate;
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin_step(unsigned long x)
{
	return x * 2654435761u + 1;
}

static void *spin(void *arg)
{
	unsigned long acc = (unsigned long)(size_t)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (slow) {
			struct timespec pause = {0, 500 * 1000000L};
			nanosleep(&pause, NULL);
			acc += spin_step(acc);
			atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
			continue;
		}
		for (int i = 0; i < 64; i++)
			acc += spin_step(acc);
		atomic_fetch_add_explicit(&calls, 64, memory_order_relaxed);
	}
	sink = acc;
	return NULL;
}

__attribute__((noinline)) void *brief(void *arg)
{
	unsigned long acc = (unsigned long)(size_t)arg;

	for (int i = 0; i < 1000; i++)
		acc += spin_step(acc);
	sink = acc;
	atomic_fetch_add_explicit(&calls, 1000, memory_order_relaxed);
	return NULL;
}

static void on_usr2(int sig)
{
	(void)sig;
	slow = 1;
}

/* Creates and joins threads, at most churn_rate a second. */
static void *churn(void *arg)
{
	struct timespec gap = {0, (long)(1e9 / churn_rate)};

	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, NULL) == 0) {
			pthread_join(t, NULL);
			atomic_fetch_add(&born, 1);
		}
		nanosleep(&gap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	static pthread_t t[257];
	struct timespec tick = {0, 50 * 1000000L};

	churn_rate = argc > 3 ? atof(argv[3]) : 0;
	if (nthreads < 1 || nthreads > 256)
		nthreads = 2;
	int said_slow = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR2, on_usr2);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, spin, (void *)(size_t)i);
	if (churn_rate > 0)
		pthread_create(&t[nthreads++], NULL, churn, NULL);
	for (long w = 0; w < (long)(seconds * 20); w++) {
		nanosleep(&tick, NULL);
		if (slow && !said_slow) {
			said_slow = 1;
			printf("slow\n");
		}
		if (churn_rate > 0)
			printf("rate %lu threads %lu\n", atomic_exchange(&calls, 0),
			       atomic_exchange(&born, 0));
		else
			printf("rate %lu\n", atomic_exchange(&calls, 0));
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("spinner: done\n");
	return 0;
}
