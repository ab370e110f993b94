/*
 * An allocation target with known bytes per call site, for `recce record
 * --event alloc`. Each round allocates 10,000 bytes:
 *   alloc_small   3 x malloc(1000), freed at once      30%
 *   alloc_zeroed  calloc(20, 100), freed at once         20%
 *   alloc_grown   realloc(NULL, 1000), freed at once     10%
 *                 (glibc's realloc calls malloc: counted once)
 *   alloc_kept    posix_memalign(64, 16000) every 4th
 *                 round, kept in a ring of 1024 blocks   40%
 * so that once the ring has turned, 1024 x 16000 bytes (16.4 MB) stay in
 * use, all from alloc_kept. Prints "ready", then "turned" each time the
 * ring has turned (for a test to record until it has), and runs until
 * killed, or for argv[1] seconds; with argv[2], at most that many rounds
 * a millisecond (a pause after each batch), for a profiler that sees
 * every sample. Built with frame pointers and without inlining of the
 * sites, so each is a frame of its own.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 1024

static void *ring[RING];
static unsigned ring_at;
static volatile unsigned long sink;
/* NULL, where the compiler cannot see it: realloc(NULL, n) stays a call
 * of realloc, which in glibc calls malloc in turn. */
static void *volatile nothing;

__attribute__((noinline)) static void alloc_small(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = malloc(1000);
		if (p)
			p[0] = (char)i;
		sink += (unsigned long)(p ? p[0] : 0);
		free(p);
	}
}

__attribute__((noinline)) static void alloc_zeroed(void)
{
	char *p = calloc(20, 100);
	sink += (unsigned long)(p ? p[5] : 0);
	free(p);
}

__attribute__((noinline)) static void alloc_grown(void)
{
	char *p = realloc(nothing, 1000);
	if (p)
		p[0] = 1;
	sink += (unsigned long)(p ? p[0] : 0);
	free(p);
}

__attribute__((noinline)) static void alloc_kept(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, 16000) != 0)
		return;
	memset(p, 1, 64);
	free(ring[ring_at]);
	ring[ring_at] = p;
	ring_at = (ring_at + 1) % RING;
	if (ring_at == 0) {
		printf("turned\n");
		fflush(stdout);
	}
}

__attribute__((noinline)) static void round_of(unsigned long n)
{
	alloc_small();
	alloc_zeroed();
	alloc_grown();
	if (n % 4 == 0)
		alloc_kept();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	unsigned long per_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	struct timespec start, now, pause = {0, 1000000};

	clock_gettime(CLOCK_MONOTONIC, &start);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long n = 0;; n++) {
		round_of(n);
		if (per_ms && n % per_ms == 0)
			nanosleep(&pause, NULL);
		if (n % 1024 == 0 && seconds > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - start.tv_sec) +
				(double)(now.tv_nsec - start.tv_nsec) / 1e9 >=
			    seconds)
				break;
		}
	}
	return 0;
}
