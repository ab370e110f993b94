/*
 * A target that exits by itself, for recce's "target exits mid-recording"
 * test.
 *
 *   exits [SECONDS]
 *
 * Spins in burn_until_exit() for SECONDS (default 1), prints "exits: done"
 * (and the CPU time it had to stderr, "exits: cpu 0.987 s") and exits 0, so that a recording longer
 * than its life must still end promptly and still name its functions after the binary is gone from
 * memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t burn_until_exit(double end)
{
	volatile uint64_t h = 7;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	return h;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;

	struct timespec cpu;

	sink = burn_until_exit(now() + seconds);
	printf("exits: done\n");
	/* The CPU time it had, to compare a sample count with whatever the
	 * machine's load. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(stderr, "exits: cpu %.3f s\n", cpu.tv_sec + cpu.tv_nsec / 1e9);
	return 0;
}
