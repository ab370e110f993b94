/*
 * The lock on a process's code (see target-lock.h).
 */
#include "inject/target-lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/lines.h"

/* The effective uid of pid, or (uid_t)-1. */
static uid_t euid_of(pid_t pid)
{
	char path[64];
	uint64_t ids[2];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (lines_key_numbers(path, "Uid", ids, 2) != 2 || ids[1] >= (uid_t)-1)
		return (uid_t)-1;
	return (uid_t)ids[1];
}

/* The process holding a flock on the inode of st, from /proc/locks; 0
 * when none is listed. */
static pid_t lock_holder(const struct stat *st)
{
	char line[256];
	pid_t found = 0;

	FILE *fp = fopen("/proc/locks", "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp) && !found) {
		char kind[16];
		int pid;
		unsigned maj, min;
		unsigned long ino;
		/* "1: FLOCK  ADVISORY  WRITE 1234 00:15:5678 0 EOF" */
		const char *at = strchr(line, ':');
		if (!at ||
		    sscanf(at + 1, " %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
			continue;
		if (strcmp(kind, "FLOCK") == 0 && ino == st->st_ino &&
		    makedev(maj, min) == st->st_dev)
			found = pid;
	}
	fclose(fp);
	return found;
}

int target_lock(pid_t pid, int wait_ms, int *fd, pid_t *holder)
{
	char path[64];
	struct stat st;

	*fd = -1;
	*holder = 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	int d = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + (uint64_t)wait_ms * 1000000u;
	for (;;) {
		if (flock(d, LOCK_EX | LOCK_NB) == 0) {
			*fd = d;
			return 0;
		}
		if (errno != EWOULDBLOCK) {
			int err = -errno;
			close(d);
			return err;
		}
		/* Only a user who may change the target's code can keep
		 * another recce out. */
		if (fstat(d, &st) == 0) {
			pid_t h = lock_holder(&st);
			uid_t u = h > 0 ? euid_of(h) : (uid_t)-1;
			if (h > 0 && u != (uid_t)-1 && u != 0 && u != st.st_uid) {
				*fd = d; /* unlocked: target_unlock() just closes it */
				return 0;
			}
			*holder = h;
		}
		if (time_now_ns(CLOCK_MONOTONIC) > deadline) {
			close(d);
			return -EBUSY;
		}
		struct timespec pause = {0, 10 * 1000000L};
		nanosleep(&pause, NULL);
	}
}

void target_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
