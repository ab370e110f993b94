/*
 * What recce asks of the kernel for itself while it watches processes:
 * a pidfd that stays bound to one process even if its pid is reused, a
 * forked child's descriptors closed but those it keeps, and
 * as many file descriptors as it may have (perf events cost one per
 * thread and CPU, so a large target needs many), and whether it may
 * watch a process of another user.
 */
#ifndef RECCE_PROC_SELF_H
#define RECCE_PROC_SELF_H

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* A pidfd of pid, or -1 with errno set (ESRCH: gone). */
static inline int proc_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* In a forked child: closes every descriptor but 0-2 and the n in keep
 * (in any order; negative ones are ignored), so that it holds nothing
 * of its parent's: sockets, perf events, a store. */
static inline void proc_close_all_but(const int *keep, size_t n)
{
	unsigned from = 3;

	for (;;) {
		int next = -1; /* the lowest kept descriptor from `from` on */
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)from && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0)
			break;
		if ((unsigned)next > from)
			close_range(from, (unsigned)next - 1, 0);
		from = (unsigned)next + 1;
	}
	close_range(from, ~0U, 0);
}

/* Raises the soft limit on open descriptors to the hard one. */
static inline void proc_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The first of pids owned by another user when recce is not root (the
 * kernel then wants the right to ptrace it, whatever the paranoid
 * level), or 0. */
static inline pid_t proc_first_foreign(const pid_t *pids, size_t n)
{
	char path[64];
	struct stat st;

	if (geteuid() == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pids[i]);
		if (stat(path, &st) == 0 && st.st_uid != geteuid())
			return pids[i];
	}
	return 0;
}

#endif
