/*
 * Starting a command held at a gate: the one launcher of `record -- CMD`
 * and `trace -- CMD`. The child forks, sets its signal mask, and waits on
 * a pipe; the caller opens its events or probes on the child's pid, then
 * opens the gate and the child execs. If recce dies first, the gate's
 * write end closes and the child exits with 127 without running the
 * command: it never runs unobserved. A second, close-on-exec pipe brings
 * back the exec's errno, so a command that cannot run is an error of
 * recce's, not a silent exit 127.
 *
 * Ownership: the caller owns the struct; launch_go or launch_cancel
 * closes its descriptors.
 */
#ifndef RECCE_PROC_LAUNCH_H
#define RECCE_PROC_LAUNCH_H

#include <signal.h>
#include <sys/types.h>

struct launch {
	pid_t pid;  /* the child; 0 once it has been reaped here */
	int gate;   /* write end of the gate, -1 once opened or closed */
	int status; /* read end of the exec-status pipe */
};

/* Forks a child that waits at the gate, then runs argv (searched on
 * PATH) with signal mask mask (NULL: none blocked). 0 or -errno. */
int launch_held(struct launch *l, char *const *argv, const sigset_t *mask);

/* The executable argv0 will run as, found the way execvp finds it:
 * argv0 itself if it has a slash, else the first executable match on
 * PATH. A malloc'ed path, or NULL when there is none. */
char *launch_which(const char *argv0);

/* Opens the gate. Returns 0 once the child has exec'ed, or the exec's
 * -errno, the child then reaped and l->pid 0. */
int launch_go(struct launch *l);

/* Closes the gate unopened: the child exits without running the
 * command, and is reaped. */
void launch_cancel(struct launch *l);

/* From now on, launch_held starts nothing and returns -EPERM: for a
 * command the agent runs for a client that may not start programs
 * (cli/grant.h). There is no way back. */
void launch_forbid(void);

#endif
