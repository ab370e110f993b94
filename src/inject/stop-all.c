/*
 * Stopping every thread of a process (see stop-all.h). A thread that
 * exits while it is being seized (ESRCH, or EPERM for one already a
 * zombie) is simply left out.
 */
#include "inject/stop-all.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "proc/procstat.h"
#include "proc/tasks.h"
#include "util/clock.h"

#define MAX_THREADS 65536

static int find(const struct stop_all *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return 1;
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig; /* only to end a blocking waitpid with EINTR */
}

/* Waits for tid's stop after PTRACE_INTERRUPT, blocked in waitpid (a
 * poll would leave recce waiting for the CPU behind the target's busy
 * threads, the process stopped meanwhile), with a timer for the
 * deadline. Returns 0 with *sig the signal it stopped for (0 for the
 * interrupt itself), -ESRCH if it exited, -ETIMEDOUT. */
static int wait_stop(pid_t tid, uint64_t deadline, int *sig)
{
	struct sigaction sa, old_sa;
	struct itimerval it, old_it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, &old_sa);
	int err = -ETIMEDOUT;
	for (;;) {
		uint64_t now = time_now_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			break;
		uint64_t left_us = (deadline - now) / 1000 + 1;
		memset(&it, 0, sizeof(it));
		it.it_value.tv_sec = (time_t)(left_us / 1000000);
		it.it_value.tv_usec = (suseconds_t)(left_us % 1000000);
		setitimer(ITIMER_REAL, &it, &old_it);
		int st;
		pid_t r = waitpid(tid, &st, __WALL);
		int werr = errno;
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		if (r < 0) {
			if (werr == EINTR)
				continue;
			err = -ESRCH;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			err = -ESRCH;
			break;
		}
		if (WIFSTOPPED(st)) {
			/* PTRACE_EVENT_STOP: our interrupt, or a group-stop. */
			*sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
			err = 0;
			break;
		}
	}
	sigaction(SIGALRM, &old_sa, NULL);
	return err;
}

/* Seizes and interrupts one thread, adding it to s as not yet stopped.
 * Returns 0, 1 when it is gone (leave it out), or -errno. */
static int interrupt_one(struct stop_all *s, pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
		int err = errno;
		if (err == ESRCH)
			return 1;
		char state = procstat_task_state(s->pid, tid);
		if (err == EPERM && (state == 0 || state == 'Z' || state == 'X'))
			return 1;
		return -err;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct stopped_thread *t = realloc(s->t, cap * sizeof(*t));
		if (!t) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return -ENOMEM;
		}
		s->t = t;
		s->cap = cap;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return 1;
	}
	struct stopped_thread *t = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->waiting = 1;
	return 0;
}

/* Waits for every thread interrupted and not stopped yet, reading its
 * registers; leaves out those that exited. All were interrupted first,
 * so they stop together rather than one after another. */
static int wait_all(struct stop_all *s, uint64_t deadline)
{
	for (size_t i = 0; i < s->n;) {
		struct stopped_thread *t = &s->t[i];
		if (!t->waiting) {
			i++;
			continue;
		}
		int err = wait_stop(t->tid, deadline, &t->sig);
		if (!err && ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) != 0) {
			ptrace(PTRACE_DETACH, t->tid, 0, t->sig);
			err = -ESRCH;
		}
		if (err == -ESRCH) {
			*t = s->t[--s->n];
			continue;
		}
		if (err) {
			/* Still running: detaching needs a stop, so the kernel
			 * lets it go when recce exits. */
			s->failed_tid = t->tid;
			return err;
		}
		t->waiting = 0;
		i++;
	}
	return 0;
}

int stop_all(struct stop_all *s, pid_t pid, int timeout_ms, int flags)
{
	struct proc_ids ids;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	if (!(flags & STOP_ALL_TAKE_STOPPED) && procstat_task_state(pid, pid) == 'T')
		return -EBUSY;
	proc_ids_init(&ids);
	s->since_ns = time_now_ns(CLOCK_MONOTONIC);
	uint64_t deadline = s->since_ns + (uint64_t)timeout_ms * 1000000;
	for (int more = 1; more && !err;) {
		ssize_t n = proc_ids_list_tasks(&ids, NULL, pid, MAX_THREADS);
		if (n < 0) {
			err = (int)n;
			break;
		}
		more = 0;
		for (ssize_t i = 0; i < n && !err; i++) {
			if (find(s, ids.ids[i]))
				continue;
			int r = interrupt_one(s, ids.ids[i]);
			if (r < 0)
				err = r;
			else if (r == 0)
				more = 1;
		}
		if (!err)
			err = wait_all(s, deadline);
	}
	proc_ids_release(&ids);
	if (!err && s->n == 0)
		err = -ESRCH;
	if (err) {
		pid_t failed = s->failed_tid;
		stop_all_release(s);
		s->failed_tid = failed;
	}
	return err;
}

uint64_t stop_all_release(struct stop_all *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct stopped_thread *t = &s->t[i];
		if (t->waiting)
			continue; /* never stopped: the kernel lets it go with recce */
		if (t->regs_changed)
			ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs);
		ptrace(PTRACE_DETACH, t->tid, 0, t->sig);
	}
	uint64_t took = s->since_ns ? time_now_ns(CLOCK_MONOTONIC) - s->since_ns : 0;
	free(s->t);
	s->t = NULL;
	s->n = s->cap = 0;
	s->since_ns = 0;
	return took;
}
