/*
 * Finding recce's own libraries (see lib-path.h).
 */
#include "proc/lib-path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_lib_path(const char *name, const char *env, char *buf, size_t len, char *where,
		  size_t wlen)
{
	const char *set = env ? getenv(env) : NULL;
	char exe[PATH_MAX];

	if (set && *set) {
		snprintf(buf, len, "%s", set);
		if (wlen)
			snprintf(where, wlen, "%s (from %s)", set, env);
		return access(buf, R_OK) == 0 ? 0 : -ENOENT;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	static const char *const rel[] = {"lib", "build/lib", "../lib/recce"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX + 64];
		char real[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s/%s", exe, rel[i], name);
		if (access(path, R_OK) == 0 && realpath(path, real) && strlen(real) < len) {
			memcpy(buf, real, strlen(real) + 1);
			return 0;
		}
	}
	if (wlen)
		snprintf(where, wlen, "%.200s/lib, %.200s/../lib/recce", exe, exe);
	return -ENOENT;
}
