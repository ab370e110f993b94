/*
 * The time now on a clock, in nanoseconds: CLOCK_MONOTONIC for deadlines
 * and durations, CLOCK_REALTIME for the times written into files.
 */
#ifndef RECCE_UTIL_CLOCK_H
#define RECCE_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define DAY_NS (86400LL * 1000000000) /* a day of the clocks, in ns */

static inline uint64_t time_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * CLOCK_REALTIME minus CLOCK_MONOTONIC now, in ns, to place monotonic
 * times (perf's, BPF's) on the wall clock. The realtime clock is read
 * between two reads of the monotonic one, and of a few tries the one
 * whose two are closest is kept: a thread preempted between two reads
 * would be off by the preemption, milliseconds on a busy machine, and two
 * parts of recce that place times each with its own offset (the tracer's
 * calls, the sampler's samples) would disagree by as much.
 */
static inline int64_t time_mono_to_real(void)
{
	int64_t best = 0, gap = INT64_MAX;

	for (int i = 0; i < 5; i++) {
		int64_t m1 = (int64_t)time_now_ns(CLOCK_MONOTONIC);
		int64_t r = (int64_t)time_now_ns(CLOCK_REALTIME);
		int64_t m2 = (int64_t)time_now_ns(CLOCK_MONOTONIC);
		if (m2 - m1 < gap) {
			gap = m2 - m1;
			best = r - (m1 + (m2 - m1) / 2);
		}
	}
	return best;
}

#endif
