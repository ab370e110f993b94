/*
 * cpu2: two threads of CPU-bound work, recursion plus loops, for a fixed
 * amount of work (UNITS per thread), so that any slowdown a profiler causes
 * shows in its wall and CPU time. `cpu2 --calibrate SECONDS` prints the
 * units that take about SECONDS of one CPU on this machine.
 *
 *     cpu2 UNITS
 */
#include <pthread.h>

#include "common.h"

static volatile uint64_t sink;

NOINLINE static uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

NOINLINE static uint64_t spin(uint64_t n, uint64_t seed)
{
	uint64_t x = seed | 1;

	XORSHIFT_LOOP(x, n, 0x9e3779b97f4a7c15ull);
	return x;
}

/* One unit: some recursion, then a loop (about 80 us on a 2020s CPU). */
NOINLINE static uint64_t unit_of_work(uint64_t seed)
{
	return fib(18) + spin(30000, seed);
}

static void calibration_unit(void)
{
	sink += unit_of_work(sink);
}

/* The two threads run through different callers so their stacks differ. */
NOINLINE static uint64_t worker_left(long units)
{
	uint64_t acc = 1;

	for (long i = 0; i < units; i++)
		acc += unit_of_work(acc);
	return acc;
}

NOINLINE static uint64_t worker_right(long units)
{
	uint64_t acc = 2;

	for (long i = 0; i < units; i++)
		acc += unit_of_work(acc);
	return acc;
}

static void *thread_right(void *arg)
{
	sink += worker_right(*(long *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (bench_calibrate_mode(argc, argv, calibration_unit))
		return 0;
	if (argc != 2) {
		fprintf(stderr, "usage: cpu2 UNITS | cpu2 --calibrate SECONDS\n");
		return 2;
	}
	long units = atol(argv[1]);
	pthread_t t;

	bench_begin();
	if (pthread_create(&t, NULL, thread_right, &units) != 0)
		return 1;
	sink += worker_left(units);
	pthread_join(t, NULL);
	bench_end();
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
