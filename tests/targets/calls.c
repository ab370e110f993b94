/*
 * A target whose calls are known, for `recce trace` tests.
 *
 *   calls [N] [PAUSE_MS] [ROUNDS] [THREADS]
 *
 * Waits PAUSE_MS (default 500) so a tracer can attach, then, ROUNDS times
 * (default 1; 0 forever), calls add_pair(i, 2 * i) and greet("client-I")
 * for i = 0..N-1 (default 10), one call every millisecond (greet copies
 * the name with strdup, so it calls malloc too), prints a
 * checksum line per round and finally "calls: done" and sleeps PAUSE_MS
 * again, so a tracer can see the process still running afterwards.
 *
 * With THREADS (default 0), THREADS worker threads make those calls
 * instead of the main thread, each printing its own checksum lines: the
 * first half of them start at once (they exist when a tracer attaches
 * during the pause), the others after the pause (a tracer must follow
 * threads created while it traces).
 *
 * With PAUSE_MS "go", it prints "calls: ready" and waits for SIGUSR1 (sent
 * once the tracer is in) instead of the first pause, and sleeps 500 ms
 * after "calls: done": a test's counts then never depend on how fast the
 * tracer attached.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ready.h"

static volatile uint64_t sink;

__attribute__((noinline)) long add_pair(long a, long b)
{
	sink += (uint64_t)a;
	return a + b;
}

/* Copies the name, so that every call also calls libc's malloc. */
__attribute__((noinline)) int greet(const char *name)
{
	char *copy = strdup(name);
	int len = copy ? (int)strlen(copy) : 0;

	sink += (uint64_t)len;
	free(copy);
	return len;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static long n_calls = 10, pause = 500, rounds = 1;
static int go_mode;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int gone; /* SIGUSR1 came */

/* The first pause: PAUSE_MS, or in go mode until main has its SIGUSR1. */
static void first_pause(void)
{
	if (!go_mode) {
		pause_ms(pause);
		return;
	}
	pthread_mutex_lock(&go_lock);
	while (!gone)
		pthread_cond_wait(&go_cond, &go_lock);
	pthread_mutex_unlock(&go_lock);
}

/* The calls of one thread: ROUNDS rounds of N calls of each function. */
static void make_calls(void)
{
	/* Each call's name keeps its own bytes: a tracer reads a string
	 * argument when it handles the event, which on a loaded machine may
	 * be after the next call, and a shared buffer would hold the next
	 * name by then (docs/recce-trace.md, Limitations). On the heap and
	 * never freed: on the stack, the last names would be overwritten
	 * by whatever runs once this function returns. */
	char(*names)[32] = malloc(64 * sizeof(*names));

	if (!names)
		abort();

	for (long r = 0; rounds == 0 || r < rounds; r++) {
		long sum = 0;
		for (long i = 0; i < n_calls; i++) {
			char *name = names[i % 64];
			sum += add_pair(i, 2 * i);
			snprintf(name, 32, "client-%ld", i);
			sum += greet(name);
			pause_ms(1);
		}
		printf("calls: round %ld checksum %ld\n", r, sum);
	}
}

static void *early_worker(void *arg)
{
	(void)arg;
	first_pause();
	make_calls();
	return NULL;
}

static void *late_worker(void *arg)
{
	(void)arg;
	make_calls();
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 4 ? atol(argv[4]) : 0;
	pthread_t tids[64];

	n_calls = argc > 1 ? atol(argv[1]) : 10;
	go_mode = argc > 2 && strcmp(argv[2], "go") == 0;
	pause = argc > 2 && !go_mode ? atol(argv[2]) : 500;
	rounds = argc > 3 ? atol(argv[3]) : 1;
	if (threads < 0 || threads > 64)
		threads = 64;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (go_mode) { /* blocked in every thread, before any starts */
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
	}
	for (long t = 0; t < threads / 2; t++)
		pthread_create(&tids[t], NULL, early_worker, NULL);
	if (go_mode) {
		target_ready("calls"); /* the early threads exist */
		target_wait_go();
		pthread_mutex_lock(&go_lock);
		gone = 1;
		pthread_cond_broadcast(&go_cond);
		pthread_mutex_unlock(&go_lock);
	} else {
		pause_ms(pause);
	}
	for (long t = threads / 2; t < threads; t++)
		pthread_create(&tids[t], NULL, late_worker, NULL);
	if (!threads)
		make_calls();
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	printf("calls: done\n");
	/* A tracer may read a string argument after the call (greet's name):
	 * the process stays a moment, its memory readable. */
	pause_ms(pause);
	return 0;
}
