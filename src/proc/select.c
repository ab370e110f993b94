/*
 * Processes chosen by their command name or executable (see select.h):
 * every pid under /proc tested against the pattern, its name and state
 * read as procstat reads them.
 */
#include "proc/select.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/exe-name.h"
#include "proc/procstat.h"
#include "proc/tasks.h"

int proc_is_selector(const char *s)
{
	return strncmp(s, "comm:", 5) == 0 || strncmp(s, "exe:", 4) == 0;
}

/* Whether comm matches pattern, whole or, for a plain name, as the
 * kernel cut a longer one. */
static int comm_matches(const char *pattern, const char *comm)
{
	return fnmatch(pattern, comm, 0) == 0 ||
	       (!strpbrk(pattern, "*?[") && exe_name_is_comm(pattern, comm));
}

static int matches(struct procstat_reader *r, pid_t pid, const char *kind, const char *pattern)
{
	char exe[4096], path[64];
	struct procstat_task task;

	if (procstat_read_process(r, pid, &task) < 0 || task.state == 'Z' || task.state == 'X')
		return 0;
	if (strcmp(kind, "comm") == 0)
		return comm_matches(pattern, task.comm);
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
	struct procstat_reader r;
	if (procstat_reader_init(&r, NULL) < 0)
		return -ENOMEM;
	proc_ids_init(&all);
	ssize_t total = proc_ids_list_dir(&all, "/proc", (size_t)-1);
	if (total < 0) {
		procstat_reader_release(&r);
		proc_ids_release(&all);
		return (int)total;
	}
	pid_t self = getpid();
	for (ssize_t i = 0; i < total; i++) {
		pid_t pid = all.ids[i];
		if (pid != self && matches(&r, pid, kind, colon + 1))
			all.ids[(*n)++] = pid;
	}
	procstat_reader_release(&r);
	if (!*n) {
		proc_ids_release(&all);
		return -ESRCH;
	}
	*pids = all.ids; /* sorted, as listed */
	return 0;
}
