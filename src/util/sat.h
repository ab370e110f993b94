/*
 * Sums of sample values that cannot overflow: a profile's values come
 * from its file, and two samples of INT64_MAX must not add up to a
 * negative total. The sum sticks at INT64_MAX (or INT64_MIN).
 */
#ifndef RECCE_UTIL_SAT_H
#define RECCE_UTIL_SAT_H

#include <stdint.h>

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif
