/*
 * binvariant: one of many distinct programs for the `binaries` group of
 * make bench. Built with -DVARIANT=N, each has code and a build-id of its
 * own, as the programs of a real machine do. It burns about 2 ms of CPU,
 * then sleeps a second, until killed: hundreds of them keep a core about
 * half busy, and a profiler at 19 Hz samples each of them within a minute
 * or two.
 */
#include <time.h>

#include "common.h"

#ifndef VARIANT
#define VARIANT 0
#endif

static volatile uint64_t sink;

NOINLINE static void burn(void)
{
	int64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 2000000;
	uint64_t x = VARIANT + 1;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + VARIANT;
	sink = x;
}

int main(void)
{
	struct timespec second = {1, 0};

	for (;;) {
		burn();
		nanosleep(&second, NULL);
	}
}
