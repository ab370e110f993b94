/*
 * A child process kept alive from a loop (see keeper.h): forked, watched
 * through its pidfd, said and forked again when it dies.
 */
#include "cli/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/usage.h"
#include "proc/self.h"
#include "util/clock.h"
#include "util/evloop.h"

/* A child that dies is forked again this long after; the KEEP_DEATHS-th
 * death within KEEP_SPAN_S makes the keeper give up. */
#define KEEP_DELAY_NS 1000000000LL
#define KEEP_DEATHS   5
#define KEEP_SPAN_S   600

struct keeper {
	const char *what;
	keeper_child_fn fn;
	void *arg;
	pid_t pid;	     /* the child running, or 0 */
	int pidfd, ready_fd; /* its pidfd; the pipe it says it runs on */
	int ready;	     /* it said so */
	int64_t started_ns;  /* CLOCK_MONOTONIC */
	int kmsg_fd;	     /* the kernel's log since it started (kmsg_open) */
	unsigned restarts;
	int64_t deaths[KEEP_DEATHS]; /* the last deaths, oldest first */
	unsigned ndeaths;
	char death[320];     /* the last death, said when the child starts again */
	struct evloop *loop; /* the caller's, once attached */
	int attached;	     /* the loop owns the descriptors */
	int gave_up;
};

/* The kernel's log from now on (/dev/kmsg, at its end), where the OOM
 * killer names the process it kills; -1 when it cannot be read (not
 * root, or kernel.dmesg_restrict). */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Whether the kernel's log since kmsg_open() says the OOM killer killed
 * pid ("Killed process PID (comm)"). Closes fd. */
static int kmsg_oom_killed(int fd, pid_t pid)
{
	char rec[8192], what[48];
	int found = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	snprintf(what, sizeof(what), "Killed process %d (", (int)pid);
	/* EPIPE: records were overwritten before they were read; go on. */
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE))
		if (n > 0) {
			rec[n] = 0;
			found |= strstr(rec, what) != NULL;
		}
	close(fd);
	return found;
}

/* Forks a child: 0, or -errno. */
static int child_fork(struct keeper *k)
{
	int ready[2];

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	if (k->kmsg_fd < 0)
		k->kmsg_fd = kmsg_open();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(ready[0]);
		close(ready[1]);
		return err;
	}
	if (pid == 0) {
		close(ready[0]);
		if (k->kmsg_fd >= 0)
			close(k->kmsg_fd);
		k->fn(k->arg, k->restarts, ready[1]);
		_exit(0); /* not reached */
	}
	close(ready[1]);
	k->pid = pid;
	k->pidfd = proc_pidfd_open(pid);
	k->ready_fd = ready[0];
	k->ready = 0;
	k->started_ns = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	return 0;
}

/* Why child pid ended, in words, from its wait status. */
static void death_words(struct keeper *k, pid_t pid, int st, char *buf, size_t len)
{
	int oom = kmsg_oom_killed(k->kmsg_fd, pid);

	k->kmsg_fd = -1;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && oom)
		snprintf(buf, len, "was killed by the kernel's out-of-memory killer");
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by SIG%s%s", sigabbrev_np(WTERMSIG(st)),
			 WCOREDUMP(st) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "ended by itself with status %d", WEXITSTATUS(st));
}

static void give_up(struct keeper *k)
{
	k->gave_up = 1;
	if (k->loop)
		evloop_stop(k->loop, 0);
}

static void watch(struct keeper *k);

static void on_restart(void *arg, int64_t due_ns)
{
	struct keeper *k = arg;
	int err;

	(void)due_ns;
	/* Said now, not at the death: a child that ended with the agent's
	 * own stop (a terminal's Ctrl-C reaches both) is not news. */
	warning("%s", k->death);
	if ((err = child_fork(k)) < 0) {
		error("cannot start %s again: %s: the agent stops", k->what, strerror(-err));
		give_up(k);
		return;
	}
	watch(k);
}

/* The child said it runs (or ended before it could). */
static void on_ready(void *arg, int fd, short revents)
{
	struct keeper *k = arg;
	char one;

	(void)revents;
	if (read(fd, &one, 1) == 1 && !k->ready) {
		k->ready = 1;
		if (k->restarts)
			note("%s samples again (pid %d, restart %u); the page shows the gap",
			     k->what, (int)k->pid, k->restarts);
	}
	evloop_remove(k->loop, fd);
	k->ready_fd = -1;
}

/* The child ended: it is forked again, or the keeper gives up. */
static void on_gone(void *arg, int fd, short revents)
{
	struct keeper *k = arg;
	int st = 0;
	char why[128];

	(void)fd;
	(void)revents;
	if (k->ready_fd >= 0) {
		/* It may have said it runs in the same round. */
		fcntl(k->ready_fd, F_SETFL, O_NONBLOCK);
		on_ready(k, k->ready_fd, POLLIN);
	}
	k->pidfd = -1; /* closed by the loop */
	pid_t pid = k->pid;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	k->pid = 0;
	if (!k->ready) {
		/* It said why on its way out. */
		error("%s could not start again: the agent stops", k->what);
		give_up(k);
		return;
	}
	death_words(k, pid, st, why, sizeof(why));
	int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	long lived = (long)((now - k->started_ns) / 1000000000);
	if (k->ndeaths == KEEP_DEATHS) {
		memmove(k->deaths, k->deaths + 1, sizeof(k->deaths) - sizeof(k->deaths[0]));
		k->ndeaths--;
	}
	k->deaths[k->ndeaths++] = now;
	if (k->ndeaths == KEEP_DEATHS && now - k->deaths[0] < KEEP_SPAN_S * 1000000000LL) {
		error("%s (pid %d) %s after %ld s, its %dth death in %d minutes: the agent stops, "
		      "for its service manager to start it anew",
		      k->what, (int)pid, why, lived, KEEP_DEATHS, KEEP_SPAN_S / 60);
		give_up(k);
		return;
	}
	k->restarts++;
	snprintf(k->death, sizeof(k->death),
		 "%s (pid %d) %s after %ld s of sampling: the window it was filling is lost; it "
		 "starts again",
		 k->what, (int)pid, why, lived);
	if (evloop_timer_add(k->loop, now + KEEP_DELAY_NS, 0, on_restart, k) < 0)
		give_up(k);
}

/* The running child's pidfd and ready pipe, in the loop. */
static void watch(struct keeper *k)
{
	if (evloop_add(k->loop, k->pidfd, EVLOOP_ONCE | EVLOOP_CLOSE, on_gone, k) < 0 ||
	    evloop_add(k->loop, k->ready_fd, EVLOOP_CLOSE, on_ready, k) < 0) {
		error("cannot watch %s: %s: the agent stops", k->what, strerror(ENOMEM));
		give_up(k);
	}
}

int keeper_start(const char *what, keeper_child_fn fn, void *arg, struct keeper **out)
{
	struct keeper *k = calloc(1, sizeof(*k));
	char one;
	ssize_t n;
	int err;

	*out = NULL;
	if (!k)
		return -ENOMEM;
	*k = (struct keeper){.what = what, .fn = fn, .arg = arg, .pidfd = -1, .kmsg_fd = -1};
	if ((err = child_fork(k)) < 0) {
		keeper_free(k);
		return err;
	}
	while ((n = read(k->ready_fd, &one, 1)) < 0 && errno == EINTR)
		;
	if (n != 1) {
		waitpid(k->pid, NULL, 0);
		k->pid = 0;
		keeper_free(k);
		return -ECHILD;
	}
	k->ready = 1;
	close(k->ready_fd);
	k->ready_fd = -1;
	*out = k;
	return 0;
}

int keeper_attach(struct keeper *k, struct evloop *loop)
{
	k->loop = loop;
	k->attached = 1;
	if (k->pidfd < 0)
		return -ESRCH; /* no pidfd: a kernel before 5.3 */
	watch(k);
	return k->gave_up ? -ENOMEM : 0;
}

int keeper_stop(struct keeper *k)
{
	int st;

	if (!k)
		return 0;
	if (k->pid > 0) {
		kill(k->pid, SIGTERM);
		while (waitpid(k->pid, &st, 0) < 0 && errno == EINTR)
			;
		k->pid = 0;
	}
	k->loop = NULL;
	return k->gave_up ? -1 : 0;
}

void keeper_free(struct keeper *k)
{
	if (!k)
		return;
	/* Never in a loop, the descriptors are the keeper's to close. */
	if (!k->attached) {
		if (k->pidfd >= 0)
			close(k->pidfd);
		if (k->ready_fd >= 0)
			close(k->ready_fd);
	}
	if (k->kmsg_fd >= 0)
		close(k->kmsg_fd);
	free(k);
}
