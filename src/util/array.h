/*
 * Growing arrays: the one place that doubles a capacity, checks the size
 * arithmetic for overflow and calls realloc.
 */
#ifndef RECCE_ARRAY_H
#define RECCE_ARRAY_H

#include <stddef.h>

/*
 * Makes room for need elements of size bytes in items (NULL for none yet),
 * whose capacity is *cap elements. Returns the array, moved or not, with
 * *cap updated; or NULL when out of memory, the old array then untouched.
 * Use: v = array_reserve(t->v, &t->cap, t->n + 1, sizeof(*t->v)).
 */
void *array_reserve(void *items, size_t *cap, size_t need, size_t size);

/*
 * A set of strings in a growing array (*items, *n of them, capacity
 * *cap): the index of a string equal to s, a copy of s added at the end
 * when there is none. Returns the index, or -ENOMEM (nothing added).
 */
long array_add_string(char ***items, size_t *n, size_t *cap, const char *s);

#endif
