/*
 * Growing arrays (see array.h): capacities double from 16 so that n
 * additions cost O(n) copying in all.
 */
#include "util/array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

long array_add_string(char ***items, size_t *n, size_t *cap, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*items)[i], s) == 0)
			return (long)i;
	char **grown = array_reserve(*items, cap, *n + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*items = grown;
	if (!(grown[*n] = strdup(s)))
		return -ENOMEM;
	return (long)(*n)++;
}
