/*
 * A process's family as /proc shows it now: its parent, and every
 * process descended from it (children, their children...), for what a
 * child inherits at fork, such as a patch; and the one that traces it.
 *
 * Ownership: proc_descendants() returns a heap array the caller frees.
 */
#ifndef RECCE_PROC_FAMILY_H
#define RECCE_PROC_FAMILY_H

#include <stddef.h>
#include <sys/types.h>

/* The process tracing pid under ptrace (a debugger, strace), 0 for none,
 * or -errno. */
pid_t proc_tracer(pid_t pid);

/* pid's parent, 0 for none, or -errno (-ESRCH: gone). */
pid_t proc_parent(pid_t pid);

/* Every live process descended from root (root left out). Returns 0 or
 * -errno. */
int proc_descendants(pid_t root, pid_t **v, size_t *n);

#endif
