/*
 * Listing pids and thread ids under /proc (see tasks.h).
 */
#include "proc/tasks.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/array.h"

void proc_ids_init(struct proc_ids *l)
{
	l->ids = NULL;
	l->n = l->cap = 0;
}

void proc_ids_release(struct proc_ids *l)
{
	free(l->ids);
	proc_ids_init(l);
}

static int compare_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

ssize_t proc_ids_list_dir(struct proc_ids *l, const char *dir, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	l->n = 0;
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d)) != NULL && l->n < max) {
		char *end;
		long v = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || v <= 0)
			continue;
		pid_t *ids = array_reserve(l->ids, &l->cap, l->n + 1, sizeof(*ids));
		if (!ids) {
			closedir(d);
			return -ENOMEM;
		}
		l->ids = ids;
		l->ids[l->n++] = (pid_t)v;
	}
	closedir(d);
	if (l->n)
		qsort(l->ids, l->n, sizeof(*l->ids), compare_pid);
	return (ssize_t)l->n;
}

ssize_t proc_ids_list_tasks(struct proc_ids *l, const char *root, pid_t pid, size_t max)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%d/task", root ? root : "/proc", (int)pid);
	ssize_t n = proc_ids_list_dir(l, path, max);
	return n == 0 ? -ESRCH : n;
}
