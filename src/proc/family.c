/*
 * Parents and descendants (see family.h).
 */
#include "proc/family.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/procstat.h"
#include "proc/tasks.h"
#include "util/lines.h"

pid_t proc_tracer(pid_t pid)
{
	char path[64];
	uint64_t tracer;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int n = lines_key_numbers(path, "TracerPid", &tracer, 1);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : n;
	return n == 1 && tracer <= INT32_MAX ? (pid_t)tracer : 0;
}

pid_t proc_parent(pid_t pid)
{
	char path[64], buf[1024];
	struct procstat_task t;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	return procstat_parse_stat(buf, (size_t)n, &t) == 0 ? t.ppid : -EINVAL;
}

int proc_descendants(pid_t root, pid_t **v, size_t *n)
{
	struct proc_ids all;

	*v = NULL;
	*n = 0;
	proc_ids_init(&all);
	ssize_t count = proc_ids_list_dir(&all, "/proc", PROCSTAT_MAX_TASKS);
	if (count < 0) {
		proc_ids_release(&all);
		return (int)count;
	}
	pid_t *parent = calloc(all.n ? all.n : 1, sizeof(*parent));
	*v = calloc(all.n ? all.n : 1, sizeof(**v));
	if (!parent || !*v) {
		free(parent);
		free(*v);
		*v = NULL;
		proc_ids_release(&all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < all.n; i++) {
		pid_t p = proc_parent(all.ids[i]);
		parent[i] = p > 0 ? p : 0;
	}
	/* Breadth first: a process joins once its parent has. */
	for (size_t added = 1; added;) {
		added = 0;
		for (size_t i = 0; i < all.n; i++) {
			int in = parent[i] == root;
			for (size_t k = 0; k < *n && !in; k++)
				in = parent[i] == (*v)[k];
			for (size_t k = 0; k < *n && in; k++)
				in = (*v)[k] != all.ids[i];
			if (in) {
				(*v)[(*n)++] = all.ids[i];
				added = 1;
			}
		}
	}
	free(parent);
	proc_ids_release(&all);
	return 0;
}

int proc_maps_files(pid_t pid, const struct proc_file_id *files, size_t nfiles, int exec,
		    size_t *which)
{
	char path[64], line[4096];
	int found = 0, lines = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (!found && fgets(line, sizeof(line), fp)) {
		lines++;
		unsigned maj, min;
		unsigned long long ino;
		char perms[8];
		/* "START-END PERMS OFFSET MAJ:MIN INODE [PATH]" */
		if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu", perms, &maj, &min, &ino) != 4 ||
		    !ino || (exec && perms[2] != 'x'))
			continue;
		uint64_t dev = (uint64_t)makedev(maj, min);
		for (size_t i = 0; i < nfiles && !found; i++)
			if (files[i].ino == ino && files[i].dev == dev) {
				*which = i;
				found = 1;
			}
	}
	fclose(fp);
	return found || lines ? found : -ESRCH;
}

pid_t proc_file_outsider(const struct proc_file_id *files, size_t nfiles, const pid_t *family,
			 size_t n, size_t *which)
{
	struct proc_ids all;
	pid_t self = getpid(), outsider = 0;

	proc_ids_init(&all);
	ssize_t count = proc_ids_list_dir(&all, "/proc", PROCSTAT_MAX_TASKS);
	if (count < 0) {
		proc_ids_release(&all);
		return (pid_t)count;
	}
	for (size_t i = 0; i < all.n && !outsider; i++) {
		pid_t pid = all.ids[i];
		int in = pid == self;
		for (size_t k = 0; k < n && !in; k++)
			in = family[k] == pid;
		if (in)
			continue;
		/* Gone, or hidden even from root (a sandbox's supervisor):
		 * recce cannot know, nor could anyone else tracing it. */
		int rc = proc_maps_files(pid, files, nfiles, 1, which);
		if (rc > 0 || (rc < 0 && rc != -ENOENT && rc != -ESRCH && rc != -EACCES))
			outsider = pid;
	}
	proc_ids_release(&all);
	return outsider;
}
