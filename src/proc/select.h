/*
 * Processes chosen by what they are rather than their ids: "comm:NAME"
 * (the kernel's command name, a shell pattern; a name cut at 15 bytes as
 * the kernel cuts it matches too) and "exe:PATTERN" (the path of the
 * executable, /proc/PID/exe, a shell pattern: 'exe:*\/nginx'). A node
 * of a fleet resolves them itself, where the ids of a process differ
 * from host to host.
 *
 * Ownership: proc_select() returns a heap array the caller frees.
 */
#ifndef RECCE_PROC_SELECT_H
#define RECCE_PROC_SELECT_H

#include <stddef.h>
#include <sys/types.h>

/* Whether s is a selector (starts with "comm:" or "exe:"). */
int proc_is_selector(const char *s);

/* The running processes (not zombies, not the caller) that selector
 * matches, ascending, into *pids (*n of them). Returns 0, -EINVAL for a
 * selector of no known kind or an empty pattern, -ESRCH when none
 * matches, -ENOMEM. */
int proc_select(const char *selector, pid_t **pids, size_t *n);

#endif
