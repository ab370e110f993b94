/*
 * One recce at a time changes a process's code: every `trace --fast`
 * (for its whole trace) and every `patch` (while it works) holds an
 * exclusive flock on the process's /proc/PID directory, which any recce
 * on the machine opens as the same inode. A second one waits, then
 * refuses. A lock held by a process of a user who could not change the
 * target's code (neither root nor the target's owner) is a neighbour's
 * attempt to shut recce out, and is ignored.
 */
#ifndef RECCE_INJECT_TARGET_LOCK_H
#define RECCE_INJECT_TARGET_LOCK_H

#include <sys/types.h>

/* Takes pid's lock, waiting up to wait_ms: 0 with *fd to pass to
 * target_unlock(); -EBUSY with *holder the recce that has it (0 when
 * unknown); -ESRCH; or -errno. */
int target_lock(pid_t pid, int wait_ms, int *fd, pid_t *holder);

/* Lets the lock go (fd < 0: none taken). */
void target_unlock(int fd);

#endif
