/*
 * split: one thread calling four leaf functions, leaf_a to leaf_d, whose
 * shares of CPU time are known by construction: each does the same work
 * per iteration (a serial xorshift chain, differing only in a constant so
 * the compiler cannot merge them), and the iteration counts are chosen from
 * a calibration that first times each leaf alone, for 50/30/15/5% of the
 * whole run (calibration included).
 *
 * The shares used as truth are also measured, not assumed: every call of a
 * leaf, calibration included, is timed with the thread's CPU clock, and
 * the stats give each leaf's share of the time spent in leaves
 * (true_a..true_d, in percent) next to the target shares.
 *
 *     split SECONDS
 */
#include "common.h"

#define ROUND_NS 10000000.0 /* one round calls each leaf once: 10 ms of CPU */

static volatile uint64_t sink;

#define LEAF(name, c)                                                                              \
	NOINLINE static uint64_t name(uint64_t n, uint64_t seed)                                   \
	{                                                                                          \
		uint64_t x = seed | 1;                                                             \
		XORSHIFT_LOOP(x, n, c);                                                            \
		return x;                                                                          \
	}

LEAF(leaf_a, 0x9e3779b97f4a7c15ull)
LEAF(leaf_b, 0xbf58476d1ce4e5b9ull)
LEAF(leaf_c, 0x94d049bb133111ebull)
LEAF(leaf_d, 0x2545f4914f6cdd1dull)

static uint64_t (*const leaves[4])(uint64_t, uint64_t) = {leaf_a, leaf_b, leaf_c, leaf_d};
static const double target[4] = {50, 30, 15, 5};
static int64_t spent_ns[4]; /* CPU time inside each leaf, all calls */

static void call_leaf(int i, uint64_t n)
{
	int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	sink += leaves[i](n, sink);
	spent_ns[i] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* Nanoseconds per iteration of each leaf, timed alone: the least of five
 * interleaved trials of 4 million iterations (about 10 ms) each, so a busy
 * machine inflates none of them more than the others. */
static void calibrate(double ns_per_iter[4])
{
	const uint64_t n = 4000000;

	for (int i = 0; i < 4; i++)
		ns_per_iter[i] = 1e300;
	for (int trial = 0; trial < 5; trial++) {
		for (int i = 0; i < 4; i++) {
			int64_t before = spent_ns[i];
			call_leaf(i, n);
			double per = (double)(spent_ns[i] - before) / (double)n;
			if (per < ns_per_iter[i])
				ns_per_iter[i] = per;
		}
	}
}

int main(int argc, char **argv)
{
	double ns_per_iter[4];
	uint64_t iters[4];

	if (argc != 2) {
		fprintf(stderr, "usage: split SECONDS\n");
		return 2;
	}
	double seconds = atof(argv[1]);

	bench_begin();
	calibrate(ns_per_iter);
	/* The calibration gave every leaf the same time; the rounds make up
	 * for it, so the whole run lands on the target shares. */
	long rounds = (long)(seconds * 1e9 / ROUND_NS);
	if (rounds < 1)
		rounds = 1;
	double total_ns = (double)rounds * ROUND_NS;
	for (int i = 0; i < 4; i++) {
		double left = target[i] / 100 * total_ns - (double)spent_ns[i];
		iters[i] = left > 0 ? (uint64_t)(left / (double)rounds / ns_per_iter[i]) : 0;
	}
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 4; i++)
			call_leaf(i, iters[i]);

	int64_t total = spent_ns[0] + spent_ns[1] + spent_ns[2] + spent_ns[3];
	bench_note("target_a=%.0f\ttarget_b=%.0f\ttarget_c=%.0f\ttarget_d=%.0f\t"
		   "true_a=%.3f\ttrue_b=%.3f\ttrue_c=%.3f\ttrue_d=%.3f\t"
		   "ns_per_iter_a=%.4f\tns_per_iter_b=%.4f\tns_per_iter_c=%.4f\tns_per_iter_d=%.4f",
		   target[0], target[1], target[2], target[3], 100.0 * spent_ns[0] / total,
		   100.0 * spent_ns[1] / total, 100.0 * spent_ns[2] / total,
		   100.0 * spent_ns[3] / total, ns_per_iter[0], ns_per_iter[1], ns_per_iter[2],
		   ns_per_iter[3]);
	bench_end();
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
