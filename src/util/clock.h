/*
 * The time now on a clock, in nanoseconds: CLOCK_MONOTONIC for deadlines
 * and durations, CLOCK_REALTIME for the times written into files.
 */
#ifndef RECCE_UTIL_CLOCK_H
#define RECCE_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t time_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
