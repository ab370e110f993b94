/*
 * A target whose calls nest in a known tree, for `recce trace --tree`:
 * main calls request(i) N times; request calls parse(i), which calls
 * tokenize(i) twice, then for every EVERY-th request (i % EVERY ==
 * EVERY - 1) slow_io(i), which sleeps SLOW_MS (at least that long however
 * busy the machine), then reply(i). Each returns a value the test knows:
 *
 *   tokenize(i) = 3i, parse(i) = i + 1, slow_io(i) = i, reply(i) = i,
 *   request(i) = 2i
 *
 * A worker thread, started before the "ready" line, makes the same calls
 * as a second tree, with i from 1000. The target prints "tree: done SUM" at the end.
 *
 * With "half", the main thread says "tree: half" halfway and waits for
 * a second SIGUSR1 there (a test's moment to act on a running target).
 *
 *   tree N PAUSE_MS|go [SLOW_MS [EVERY [half]]]   (defaults 60 and 4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ready.h"

static long slow_ms = 60, every = 4;

__attribute__((noinline)) long tokenize(long i)
{
	__asm__ volatile("" ::: "memory");
	return 3 * i;
}

__attribute__((noinline)) long parse(long i)
{
	long a = tokenize(i);
	long b = tokenize(i);
	return (a + b) / 6 + 1;
}

__attribute__((noinline)) long slow_io(long i)
{
	struct timespec ts = {slow_ms / 1000, (slow_ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
	return i;
}

static __thread volatile long sent; /* per thread: both call reply */

__attribute__((noinline)) long reply(long i)
{
	sent = i;
	return sent;
}

__attribute__((noinline)) long request(long i)
{
	long p = parse(i);
	if (i % every == every - 1)
		slow_io(i);
	return p - 1 + reply(i);
}

static long n_calls;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	long sum = 0;

	(void)arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < n_calls; i++)
		sum += request(1000 + i);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	n_calls = argc > 1 ? atol(argv[1]) : 8;
	if (argc > 3)
		slow_ms = atol(argv[3]);
	if (argc > 4 && atol(argv[4]) > 0)
		every = atol(argv[4]);
	pthread_t th;
	void *wsum = NULL;
	long sum = 0;
	sigset_t usr1;

	/* The worker is there before the tracer, and waits for go as well:
	 * a tracer that follows new threads late still sees all its calls.
	 * It inherits SIGUSR1 blocked, so the go signal is main's. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	pthread_barrier_init(&start, NULL, 2);
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	int go = target_start(argc > 2 ? argv[2] : NULL, "tree");
	pthread_barrier_wait(&start);
	int half = argc > 5 && strcmp(argv[5], "half") == 0;
	for (long i = 0; i < n_calls; i++) {
		if (half && i == n_calls / 2) {
			printf("tree: half\n");
			fflush(stdout);
			target_wait_go();
		}
		sum += request(i);
	}
	pthread_join(th, &wsum);
	printf("tree: done %ld\n", sum + (long)wsum);
	fflush(stdout);
	if (!go)
		target_start(argc > 2 ? argv[2] : NULL, "tree");
	return 0;
}
