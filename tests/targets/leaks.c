/*
 * A leak among allocations that do not leak, for `recce record --event
 * alloc --leaks`. Each round, about a millisecond apart:
 *   leak_request  malloc(2048), kept for ever: in use only grows
 *   churn         malloc(2048), freed at once
 *   cache_put     16 times malloc(2048) into a ring of 256, freeing the
 *                 one it replaces: full after 16 rounds, steady after.
 *                 A recording sees the blocks put since it began, all of
 *                 the ring after 16 rounds, so the cache's use it sees
 *                 stops growing before its first snapshot (1 s) even
 *                 where a round, its 1 ms pause and some 50 calls through
 *                 uprobes, takes ten times as long on a busy machine
 *                 (64 rounds, with a ring of 1024, can take longer than
 *                 that: the cache's use was once said to grow)
 * Prints "ready", then "full" once the cache is, and runs until killed.
 * Built with frame pointers and without inlining of the sites, so each is
 * a frame of its own.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CACHE 256
#define PUTS  16 /* cache_put calls a round */

static void *cache[CACHE];
static volatile unsigned long sink;
static void **kept;
static size_t nkept, kept_cap;

__attribute__((noinline)) static void leak_request(void)
{
	if (nkept == kept_cap) {
		size_t cap = kept_cap ? 2 * kept_cap : 1024;
		void **v = realloc(kept, cap * sizeof(*v));
		if (!v)
			return;
		kept = v;
		kept_cap = cap;
	}
	char *p = malloc(2048);
	if (p)
		p[0] = 1;
	kept[nkept++] = p;
}

__attribute__((noinline)) static void churn(void)
{
	char *p = malloc(2048);
	if (p)
		p[0] = 1;
	sink += p ? (unsigned long)p[0] : 0;
	free(p);
}

__attribute__((noinline)) static void cache_put(unsigned long n)
{
	char *p = malloc(2048);
	if (p)
		p[0] = 1;
	free(cache[n % CACHE]);
	cache[n % CACHE] = p;
}

int main(void)
{
	struct timespec pause = {0, 1000000};

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long n = 0;; n++) {
		leak_request();
		churn();
		for (int k = 0; k < PUTS; k++)
			cache_put(n * PUTS + (unsigned long)k);
		if (n == CACHE / PUTS) {
			printf("full\n");
			fflush(stdout);
		}
		nanosleep(&pause, NULL);
	}
	return 0;
}
