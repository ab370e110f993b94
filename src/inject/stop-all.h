/*
 * Every thread of a process stopped under ptrace, the state in which
 * recce may change a target's registers or code: each thread is seized
 * (PTRACE_SEIZE, no option that could hurt the target if recce died) and
 * interrupted, and the thread list is read again until no new thread has
 * appeared, since a thread being created while its creator stopped shows
 * up only afterwards. Releasing detaches from each thread, which goes on
 * from its registers (changed or not); a thread that stopped for a signal
 * gets that signal back.
 *
 * If recce dies, the kernel detaches every thread the same way, so a
 * stopped target never stays stopped.
 *
 * Ownership: the caller owns the struct; stop_all() fills it and
 * stop_all_release() detaches and frees what it holds.
 */
#ifndef RECCE_INJECT_STOP_ALL_H
#define RECCE_INJECT_STOP_ALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct stopped_thread {
	pid_t tid;
	int sig;		      /* stopped for this signal, given back on release; 0: none */
	int regs_changed;	      /* regs to be written back before release */
	int waiting;		      /* interrupted, not stopped yet (inside stop_all) */
	struct user_regs_struct regs; /* where it stopped */
};

struct stop_all {
	pid_t pid;
	struct stopped_thread *t;
	size_t n, cap;
	uint64_t since_ns; /* CLOCK_MONOTONIC when the first thread was interrupted */
	pid_t failed_tid;  /* on -ETIMEDOUT: the thread that would not stop */
};

/* A process stopped by job control (SIGSTOP, ^Z) is taken as it is, for
 * work that runs none of its code (reading and writing its memory): each
 * thread reports its stop once seized and goes back into the group-stop
 * when released, unless SIGCONT came meanwhile. Without the flag such a
 * process is refused, since a call made in it could not run. */
#define STOP_ALL_TAKE_STOPPED 1

/*
 * Stops every thread of pid, waiting at most timeout_ms for each. Returns
 * 0; -EPERM when ptrace is refused; -ESRCH when the process is gone;
 * -EBUSY when it is stopped by a signal (job control) and flags lack
 * STOP_ALL_TAKE_STOPPED; -ETIMEDOUT when a thread would not stop
 * (failed_tid says which). On failure nothing stays stopped.
 */
int stop_all(struct stop_all *s, pid_t pid, int timeout_ms, int flags);

/* Detaches from every thread, writing back the registers of those marked
 * regs_changed first. Returns how long the process was stopped, in ns. */
uint64_t stop_all_release(struct stop_all *s);

#endif
