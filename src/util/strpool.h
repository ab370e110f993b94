/*
 * A pool of interned strings: equal strings share one copy, so they can be
 * compared by pointer, and all of them are freed at once. The symbolizer
 * and the process registry keep their names, paths and file names here.
 *
 * Ownership: the caller owns the struct (strpool_init/strpool_release);
 * every string returned lives until strpool_release().
 */
#ifndef RECCE_STRPOOL_H
#define RECCE_STRPOOL_H

#include <stddef.h>

#include "util/arena.h"
#include "util/htab.h"

struct strpool {
	struct arena arena; /* the copies */
	struct htab set;    /* hash -> (uintptr_t) copy */
};

void strpool_init(struct strpool *p);
void strpool_release(struct strpool *p);

/* The pooled copy of s (NULL is taken as ""), or NULL if out of memory. */
const char *strpool_intern(struct strpool *p, const char *s);

/* The same for the len bytes at s, which need no terminating NUL. */
const char *strpool_intern_len(struct strpool *p, const char *s, size_t len);

#endif
