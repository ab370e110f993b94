/*
 * Listing pids and thread ids under /proc: the one reader of /proc and
 * /proc/PID/task as directories, used by record (the threads to sample),
 * trace (the threads to probe) and top (every process and thread).
 *
 * A listing is a snapshot: threads come and go while it is read, so a
 * caller that must not miss one lists again until nothing new appears.
 *
 * Ownership: the caller owns the struct (proc_ids_init/proc_ids_release);
 * the struct owns its array, reused by each listing.
 */
#ifndef RECCE_PROC_TASKS_H
#define RECCE_PROC_TASKS_H

#include <stddef.h>
#include <sys/types.h>

struct proc_ids {
	pid_t *ids; /* n ids, sorted ascending */
	size_t n, cap;
};

void proc_ids_init(struct proc_ids *l);
void proc_ids_release(struct proc_ids *l);

/* Lists the numeric entries of dir, at most max of them. Returns the
 * count, -ESRCH when dir does not exist, or another -errno. */
ssize_t proc_ids_list_dir(struct proc_ids *l, const char *dir, size_t max);

/* Lists the threads of pid from ROOT/PID/task (root NULL: "/proc").
 * Returns the count, or -ESRCH when the process is gone or a zombie
 * (whose task directory is empty). */
ssize_t proc_ids_list_tasks(struct proc_ids *l, const char *root, pid_t pid, size_t max);

#endif
