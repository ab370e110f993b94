/*
 * Where recce's own libraries that it loads into other processes are
 * (librecce-fast.so for trace --fast, librecce-patch.so for patch): named
 * by an environment variable, else beside the recce executable, in a
 * build tree, or in the installed tree.
 */
#ifndef RECCE_PROC_LIB_PATH_H
#define RECCE_PROC_LIB_PATH_H

#include <stddef.h>

/* Fills buf with the absolute path of recce's library name, or of the
 * file env names when that is set. Returns 0, or -ENOENT with the places
 * looked in written to where (wlen bytes). */
int proc_lib_path(const char *name, const char *env, char *buf, size_t len, char *where,
		  size_t wlen);

#endif
