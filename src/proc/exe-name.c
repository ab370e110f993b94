/*
 * The name a program was run by (see exe-name.h): candidates from the
 * command name and argv[0], each kept only if it is the executable's own
 * file as the process sees it.
 */
#include "proc/exe-name.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/path.h"

#define DELETED_SUFFIX " (deleted)"
#define COMM_MAX       15 /* TASK_COMM_LEN - 1: the kernel cuts longer names */

/* The first line or NUL-terminated string of a /proc file, or "". */
static void read_first(const char *file, char *buf, size_t cap)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* Whether path, in pid's mount namespace, is the file exe is. */
static int same_file(pid_t pid, const char *path, const struct stat *exe)
{
	char full[4200];
	struct stat st;

	if (path[0] != '/' ||
	    (size_t)snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path) >= sizeof(full))
		return 0;
	return stat(full, &st) == 0 && st.st_dev == exe->st_dev && st.st_ino == exe->st_ino;
}

int exe_name_is_comm(const char *base, const char *comm)
{
	size_t n = strlen(comm);

	return n && strncmp(base, comm, n) == 0 && (base[n] == 0 || n == COMM_MAX);
}

/* Copies path to out if it fits and is pid's executable; returns 1 then. */
static int take(pid_t pid, const char *path, const struct stat *exe, char *out, size_t cap)
{
	size_t n = strlen(path);

	if (n >= cap || !same_file(pid, path, exe))
		return 0;
	memcpy(out, path, n + 1);
	return 1;
}

int exe_name_as_run(pid_t pid, char *real, size_t rcap, char *as_run, size_t acap)
{
	char file[64], comm[32], argv0[4096], cand[4200];
	struct stat exe;

	snprintf(file, sizeof(file), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(file, real, rcap - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= rcap - 1)
		return -ENAMETOOLONG;
	real[n] = 0;
	size_t slen = strlen(DELETED_SUFFIX);
	if ((size_t)n > slen && strcmp(real + n - slen, DELETED_SUFFIX) == 0)
		return 0; /* no path leads to it any more */
	if (stat(file, &exe) < 0)
		return -errno;
	snprintf(file, sizeof(file), "/proc/%d/comm", (int)pid);
	read_first(file, comm, sizeof(comm));
	const char *base = path_base(real);
	if (!comm[0] || exe_name_is_comm(base, comm))
		return 0;
	/* argv[0] as run ("/usr/bin/redis-server", or "redis-server" found
	 * on the PATH, beside the file it links to). */
	snprintf(file, sizeof(file), "/proc/%d/cmdline", (int)pid);
	read_first(file, argv0, sizeof(argv0));
	const char *abase = path_base(argv0);
	size_t dir = (size_t)(base - real);
	if (argv0[0] && exe_name_is_comm(abase, comm)) {
		if (argv0[0] == '/' && take(pid, argv0, &exe, as_run, acap))
			return 1;
		if ((size_t)snprintf(cand, sizeof(cand), "%.*s%s", (int)dir, real, abase) <
			sizeof(cand) &&
		    take(pid, cand, &exe, as_run, acap))
			return 1;
	}
	/* The command name itself, beside the file. */
	if ((size_t)snprintf(cand, sizeof(cand), "%.*s%s", (int)dir, real, comm) < sizeof(cand) &&
	    take(pid, cand, &exe, as_run, acap))
		return 1;
	return 0;
}
