/*
 * A target with one known hot function for recce's black-box tests.
 *
 *   hot [SECONDS]
 *
 * Calls burn_cpu() in rounds for SECONDS (forever when absent or 0, until
 * SIGTERM or SIGINT). Every round computes the same hash chain, so the result
 * is deterministic: at the end hot prints one checksum line whose text does
 * not depend on how long it ran, and exits 3 if any round disagreed with the
 * first (something disturbed the process). Nearly all of the time is spent
 * on the line marked HOT-LINE, so a profiler must name burn_cpu and this
 * file:line. The CPU time it used goes to stderr ("hot: cpu 1.234 s"), to
 * compare with a sample count whatever the machine's load.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((noinline)) uint64_t burn_cpu(uint64_t seed, long n)
{
	volatile uint64_t h = seed;

	/* The loop and its body on one line: without optimisation the loop's
	 * own compare and increment take as many samples as the body. */
	// clang-format off
	for (long i = 0; i < n; i++) h = (h ^ (uint64_t)i) * 0x100000001b3ULL + (h >> 29); /* HOT-LINE */
	// clang-format on
	return h;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	double end = now() + seconds;
	uint64_t first = 0;
	long rounds = 0;
	int bad = 0;
	struct timespec cpu;

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!stop && (seconds <= 0 || now() < end)) {
		uint64_t h = burn_cpu(0xcbf29ce484222325ULL, 2000000);

		if (rounds++ == 0)
			first = h;
		else if (h != first)
			bad = 1;
		sink = h;
	}
	printf("hot: checksum %016llx%s\n", (unsigned long long)first, bad ? " MISMATCH" : "");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(stderr, "hot: cpu %.3f s\n", cpu.tv_sec + cpu.tv_nsec / 1e9);
	return bad ? 3 : 0;
}
