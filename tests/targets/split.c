/*
 * A target with a known CPU split, for the continuous agent's tests.
 *
 *   split [SECONDS]
 *
 * Runs for SECONDS (default 10) of wall time, in rounds: work_a() makes
 * 3n turns of a loop, then work_b() n turns of the same loop, so whatever
 * the machine's load, three quarters of its CPU time are in work_a and one
 * quarter in work_b. Each round draws n between 50,000 and 150,000: with
 * rounds all alike, a sampler's fixed period could keep landing at the
 * same point of the round and see any split at all. Prints "split: done"
 * at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The same loop in both functions: the share of CPU time each takes is
 * the share of iterations it makes, whatever else the machine does. */
#define SPIN(n)                                                                                    \
	do {                                                                                       \
		for (long i = 0; i < (n); i++)                                                     \
			sink = sink * 6364136223846793005ULL + 1;                                  \
	} while (0)

__attribute__((noinline)) void work_a(long n)
{
	SPIN(3 * n);
}

__attribute__((noinline)) void work_b(long n)
{
	SPIN(n);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	int64_t end = ns_of(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	uint64_t draw = (uint64_t)ns_of(CLOCK_REALTIME) | 1;

	while (ns_of(CLOCK_MONOTONIC) < end) {
		draw ^= draw << 13; /* xorshift64 */
		draw ^= draw >> 7;
		draw ^= draw << 17;
		long n = 50000 + (long)(draw % 100001);

		work_a(n);
		work_b(n);
	}
	printf("split: done\n");
	return 0;
}
