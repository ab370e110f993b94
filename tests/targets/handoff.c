/*
 * Allocations freed by another thread, for `recce record --event alloc`:
 * a producer thread (make_block) mallocs 1000-byte blocks and hands each
 * to a consumer thread (eat_block) through a ring of 64, which frees it.
 * At most 64 blocks (64 KB) are in use at any time: every sampled block
 * is freed on another thread soon after it was allocated. Prints "ready"
 * and runs until killed, or for argv[1] seconds; at most argv[2] blocks
 * a millisecond (a pause after each batch), 100 without.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define RING 64

static void *volatile ring[RING];
static volatile unsigned long made, eaten;
static volatile int done;

__attribute__((noinline)) static void *make_block(void)
{
	char *p = malloc(1000);
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noinline)) static void eat_block(void *p)
{
	free(p);
}

static void *consumer(void *arg)
{
	(void)arg;
	while (!done || eaten < made) {
		if (eaten == __atomic_load_n(&made, __ATOMIC_ACQUIRE))
			continue;
		eat_block(ring[eaten % RING]);
		__atomic_store_n(&eaten, eaten + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	unsigned long per_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
	struct timespec start, now, pause = {0, 1000000};
	pthread_t t;

	if (pthread_create(&t, NULL, consumer, NULL) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long n = 1;; n++) {
		while (made - __atomic_load_n(&eaten, __ATOMIC_ACQUIRE) >= RING)
			;
		ring[made % RING] = make_block();
		__atomic_store_n(&made, made + 1, __ATOMIC_RELEASE);
		if (per_ms && n % per_ms == 0) {
			nanosleep(&pause, NULL);
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (seconds > 0 && (double)(now.tv_sec - start.tv_sec) +
						   (double)(now.tv_nsec - start.tv_nsec) / 1e9 >=
					       seconds)
				break;
		}
	}
	done = 1;
	pthread_join(t, NULL);
	return 0;
}
