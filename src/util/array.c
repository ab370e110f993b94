/*
 * Growing arrays (see array.h): capacities double from 16 so that n
 * additions cost O(n) copying in all.
 */
#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>

void *array_reserve(void *items, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;

	if (need <= *cap && items)
		return items;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return NULL;
	void *n = realloc(items, ncap * size);
	if (!n)
		return NULL;
	*cap = ncap;
	return n;
}
