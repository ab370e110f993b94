/*
 * A lock that processes forked from one another share: a robust,
 * process-shared mutex in a page of shared memory, so that a holder that
 * dies (killed at its deadline, say) passes it on instead of leaving the
 * others waiting for ever. The fleet store's exporting processes take it
 * around the stacks they send, so that two of them at once do not send
 * the same stack twice. Beside the lock, a few bytes the processes
 * share, read and written by the one that holds it.
 *
 * Ownership: proc_lock_new() maps the page before the forks; every
 * process that inherits it may take and give it; the one that made it
 * unmaps it with proc_lock_free() (its children keep their mapping).
 */
#ifndef RECCE_UTIL_PROC_LOCK_H
#define RECCE_UTIL_PROC_LOCK_H

struct proc_lock;

/* A new lock, or NULL with errno set. */
struct proc_lock *proc_lock_new(void);
void proc_lock_free(struct proc_lock *l);

/* Takes the lock, waiting for it; one whose holder died is taken as it
 * is. 0, or -errno. */
int proc_lock_take(struct proc_lock *l);
void proc_lock_give(struct proc_lock *l);

/* The PROC_LOCK_NOTE bytes shared beside the lock, zeroed when it is
 * made: read or written only while holding it. */
#define PROC_LOCK_NOTE 64
char *proc_lock_note(struct proc_lock *l);

#endif
