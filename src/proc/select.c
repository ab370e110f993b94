/*
 * Processes chosen by their command name or executable (see select.h):
 * every pid under /proc tested against the pattern.
 */
#include "proc/select.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/tasks.h"

#define COMM_LEN 15 /* the kernel keeps 15 bytes of a command name */

int proc_is_selector(const char *s)
{
	return strncmp(s, "comm:", 5) == 0 || strncmp(s, "exe:", 4) == 0;
}

/* pid's command name into buf, and whether it is running (not a zombie):
 * 1, 0, or -errno when it is gone. */
static int comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64], stat[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	stat[n] = '\0';
	/* "PID (COMM) STATE": the name may hold anything but the last ')'. */
	char *open_ = strchr(stat, '('), *close_ = strrchr(stat, ')');
	if (!open_ || !close_ || close_ < open_ || close_[1] != ' ')
		return -ESRCH;
	snprintf(buf, len, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	return close_[2] != 'Z' && close_[2] != 'X';
}

/* Whether comm matches pattern, whole or as the kernel cut a longer name. */
static int comm_matches(const char *pattern, const char *comm)
{
	char cut[COMM_LEN + 1];

	if (fnmatch(pattern, comm, 0) == 0)
		return 1;
	if (strlen(comm) < COMM_LEN)
		return 0;
	snprintf(cut, sizeof(cut), "%s", pattern);
	return strpbrk(pattern, "*?[") == NULL && strcmp(cut, comm) == 0;
}

static int matches(pid_t pid, const char *kind, const char *pattern)
{
	char comm[64], exe[4096], path[64];
	int running = comm_of(pid, comm, sizeof(comm));

	if (running <= 0)
		return 0;
	if (strcmp(kind, "comm") == 0)
		return comm_matches(pattern, comm);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0; /* a kernel thread, or not ours to look at */
	exe[n] = '\0';
	/* A file replaced since the process started reads "PATH (deleted)". */
	char *deleted = strstr(exe, " (deleted)");
	if (deleted && deleted[10] == '\0')
		*deleted = '\0';
	return fnmatch(pattern, exe, 0) == 0;
}

int proc_select(const char *selector, pid_t **pids, size_t *n)
{
	const char *colon = strchr(selector, ':');
	struct proc_ids all;
	char kind[8];

	*pids = NULL;
	*n = 0;
	if (!proc_is_selector(selector) || !colon[1])
		return -EINVAL;
	snprintf(kind, sizeof(kind), "%.*s", (int)(colon - selector), selector);
	proc_ids_init(&all);
	ssize_t total = proc_ids_list_dir(&all, "/proc", (size_t)-1);
	if (total < 0) {
		proc_ids_release(&all);
		return (int)total;
	}
	pid_t self = getpid();
	for (ssize_t i = 0; i < total; i++) {
		pid_t pid = all.ids[i];
		if (pid != self && matches(pid, kind, colon + 1))
			all.ids[(*n)++] = pid;
	}
	if (!*n) {
		proc_ids_release(&all);
		return -ESRCH;
	}
	*pids = all.ids; /* sorted, as listed */
	return 0;
}
