/*
 * deep: one thread whose CPU time is spent 200 frames deep: each unit
 * recurses 200 calls down through descend() and runs a loop at the bottom.
 * `deep --calibrate SECONDS` prints the units for about SECONDS of CPU.
 *
 *     deep UNITS
 */
#include "common.h"

#define DEPTH 200

static volatile uint64_t sink;

NOINLINE static uint64_t bottom(uint64_t seed)
{
	uint64_t x = seed | 1;

	XORSHIFT_LOOP(x, 40000, 0x2545f4914f6cdd1dull);
	return x;
}

/* The empty asm after the call keeps the call a real call: without it GCC
 * may turn the recursion into a loop (tail recursion with accumulator). */
NOINLINE static uint64_t descend(int depth, uint64_t seed)
{
	uint64_t r;

	if (depth <= 1)
		return bottom(seed);
	r = descend(depth - 1, seed + 1);
	__asm__ volatile("" : "+r"(r));
	return r ^ (uint64_t)depth;
}

static void calibration_unit(void)
{
	sink += descend(DEPTH - 2, sink); /* main and the unit are frames too */
}

int main(int argc, char **argv)
{
	if (bench_calibrate_mode(argc, argv, calibration_unit))
		return 0;
	if (argc != 2) {
		fprintf(stderr, "usage: deep UNITS | deep --calibrate SECONDS\n");
		return 2;
	}
	long units = atol(argv[1]);

	bench_begin();
	for (long i = 0; i < units; i++)
		sink += descend(DEPTH - 2, sink);
	bench_end();
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
