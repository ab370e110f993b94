/*
 * A robust mutex in shared memory (see proc-lock.h).
 */
#include "util/proc-lock.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>

struct proc_lock {
	pthread_mutex_t mutex;
	char note[PROC_LOCK_NOTE];
};

struct proc_lock *proc_lock_new(void)
{
	pthread_mutexattr_t attr;
	struct proc_lock *l =
	    mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (l == MAP_FAILED)
		return NULL;
	int err = pthread_mutexattr_init(&attr);
	if (!err)
		err = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	if (!err)
		err = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (!err)
		err = pthread_mutex_init(&l->mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	if (err) {
		munmap(l, sizeof(*l));
		errno = err;
		return NULL;
	}
	return l;
}

void proc_lock_free(struct proc_lock *l)
{
	if (l)
		munmap(l, sizeof(*l));
}

int proc_lock_take(struct proc_lock *l)
{
	int err = pthread_mutex_lock(&l->mutex);

	/* Its holder died: what it guarded is whole or not there (each
	 * INSERT lands whole or not at all), so the lock is taken as is. */
	if (err == EOWNERDEAD)
		err = pthread_mutex_consistent(&l->mutex);
	return -err;
}

void proc_lock_give(struct proc_lock *l)
{
	pthread_mutex_unlock(&l->mutex);
}

char *proc_lock_note(struct proc_lock *l)
{
	return l->note;
}
