/*
 * The allocation benchmark: a million allocations a second. Each step
 * mallocs 64 bytes, touches and frees them, and works about a microsecond
 * (xorshift steps calibrated at start), so that alone it allocates about
 * 1,000,000 times a second. `allocs N`: calibrates, prints "ready", waits
 * BENCH_WAIT_MS (so that a profiler can attach), makes N steps and prints
 * "ns_per_iter=X" (one step) and "allocs_per_s=Y".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define STEP_NS 1000.0

static volatile uint64_t sink;
static uint64_t work_steps; /* xorshift steps in one microsecond */

NOINLINE static void work(void)
{
	uint64_t x = sink | 1;
	XORSHIFT_LOOP(x, work_steps, 0);
	sink = x;
}

NOINLINE static void allocate(void)
{
	char *p = malloc(64);
	if (p)
		p[0] = (char)sink;
	sink += p ? (uint64_t)p[0] : 0;
	free(p);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: allocs N\n");
		return 2;
	}
	long n = atol(argv[1]);
	/* How many xorshift steps a microsecond takes, less an allocation. */
	work_steps = 1000;
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < 20000; i++) {
		work();
		allocate();
	}
	double per = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 20000;
	work_steps = (uint64_t)(1000 * STEP_NS / per);
	if (!work_steps)
		work_steps = 1;
	printf("ready\n");
	fflush(stdout);
	const char *w = getenv("BENCH_WAIT_MS");
	if (w)
		usleep((useconds_t)atol(w) * 1000);
	int64_t start = clock_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		work();
		allocate();
	}
	double ns = (double)(clock_ns(CLOCK_MONOTONIC) - start);
	printf("ns_per_iter=%.1f\nallocs_per_s=%.0f\n", ns / (double)n, (double)n * 1e9 / ns);
	return 0;
}
