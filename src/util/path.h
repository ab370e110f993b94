/*
 * Path helpers for the file names recce prints: a mapping's path is
 * shown by its last component, as perf and pprof do.
 */
#ifndef RECCE_UTIL_PATH_H
#define RECCE_UTIL_PATH_H

#include <string.h>

/* The last component of path ("libc.so.6" of "/usr/lib/libc.so.6"), or
 * path itself when it has no slash or ends in one. */
static inline const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

#endif
