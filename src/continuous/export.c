/*
 * The fleet store's exports, each in a process of its own (see export.h).
 */
#include "continuous/export.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/self.h"
#include "util/array.h"
#include "util/readall.h"

/* What an exporting process writes on its pipe, then the nsent stack
 * hashes it sent. */
struct export_head {
	int32_t err;
	char why[512];
	uint64_t nsent;
	char retained[16]; /* the day it ran retention for, or "" */
	char cutoff[16];   /* the first day it kept */
	int32_t dropped;
	char retain_why[512]; /* why retention failed, or "" */
};

struct export_proc {
	pid_t pid;
	int64_t start_ns[EXPORT_BATCH_MAX]; /* the windows' */
	size_t nw;
	int fd; /* the pipe's reading end */
	unsigned char *buf;
	size_t len, cap;
};

struct exporter {
	struct clickhouse *ch;
	struct evloop *loop;
	export_done_fn done;
	export_retained_fn retained;
	void *arg;
	struct export_proc procs[EXPORT_PROCESSES];
	size_t n;
};

int exporter_new(struct clickhouse *ch, struct evloop *loop, export_done_fn done, void *arg,
		 struct exporter **out)
{
	struct exporter *x = calloc(1, sizeof(*x));

	if (!x)
		return -ENOMEM;
	*x = (struct exporter){.ch = ch, .loop = loop, .done = done, .arg = arg};
	int err = clickhouse_share(ch);
	if (err) {
		free(x);
		return err;
	}
	*out = x;
	return 0;
}

/* The exporting process: every descriptor closed but fd, the window
 * out, what became of it on fd, and the end. SIGALRM ends it at its
 * deadline, whatever it waits for; the stop signals stay blocked, so
 * that the last window of an agent stopped by Ctrl-C is sent. Never
 * returns. */
static void export_child(struct exporter *x, int fd, const struct clickhouse_window *ws, size_t nw,
			 unsigned flags)
{
	sigset_t alrm;
	struct export_head h = {0};
	const uint64_t *sent = NULL;
	size_t nsent = 0;

	/* Nothing of the agent's held open here: its sockets (a restarted
	 * agent binds them again at once), its perf events, its store. */
	proc_close_all_but(&fd, 1);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	alarm(EXPORT_DEADLINE_S);
	int err = clickhouse_export(x->ch, ws, nw, flags);
	const char *retain_why = NULL,
		   *day = clickhouse_retain_news(x->ch, h.cutoff, &h.dropped, &retain_why);
	if (day)
		snprintf(h.retained, sizeof(h.retained), "%s", day);
	if (retain_why)
		snprintf(h.retain_why, sizeof(h.retain_why), "%s", retain_why);
	h.err = err;
	if (err)
		snprintf(h.why, sizeof(h.why), "%s", clickhouse_error(x->ch));
	else
		sent = clickhouse_last_sent(x->ch, &nsent);
	h.nsent = nsent;
	write_all(fd, &h, sizeof(h));
	if (nsent)
		write_all(fd, sent, nsent * sizeof(*sent));
	_exit(0);
}

/* Process i has ended (its pipe is at its end): reaped, heard, told. */
static void finish(struct exporter *x, size_t i)
{
	struct export_proc *e = &x->procs[i];
	struct export_head h;
	int status = 0, err;
	const char *why;
	char words[96];

	evloop_remove(x->loop, e->fd);
	close(e->fd);
	while (waitpid(e->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (e->len >= sizeof(h)) {
		memcpy(&h, e->buf, sizeof(h));
		h.why[sizeof(h.why) - 1] = '\0';
		err = h.err;
		why = h.why;
		if (!err && e->len == sizeof(h) + h.nsent * sizeof(uint64_t) &&
		    h.nsent <= (e->len - sizeof(h)) / sizeof(uint64_t)) {
			uint64_t *sent = malloc(h.nsent ? h.nsent * sizeof(*sent) : 1);
			if (sent) {
				memcpy(sent, e->buf + sizeof(h), h.nsent * sizeof(*sent));
				clickhouse_learn(x->ch, sent, h.nsent);
			}
			free(sent);
		}
		h.retained[sizeof(h.retained) - 1] = '\0';
		h.retain_why[sizeof(h.retain_why) - 1] = '\0';
		h.cutoff[sizeof(h.cutoff) - 1] = '\0';
		if (h.retained[0]) {
			clickhouse_retained(x->ch, h.retained);
			if (x->retained)
				x->retained(x->arg, h.cutoff, h.dropped,
					    h.retain_why[0] ? h.retain_why : NULL);
		}
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		err = -ETIMEDOUT;
		snprintf(words, sizeof(words), "not done within %d s", EXPORT_DEADLINE_S);
		why = words;
	} else {
		/* How it ended, for whoever looks into it: a crash is a bug. */
		err = -EIO;
		if (WIFSIGNALED(status))
			snprintf(words, sizeof(words),
				 "the exporting process was killed by signal %d before it said",
				 WTERMSIG(status));
		else
			snprintf(words, sizeof(words),
				 "the exporting process ended (status %d) before it said",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		why = words;
	}
	free(e->buf);
	int64_t start[EXPORT_BATCH_MAX];
	size_t nw = e->nw;
	memcpy(start, e->start_ns, nw * sizeof(*start));
	x->procs[i] = x->procs[--x->n];
	x->done(x->arg, start, nw, err, why);
}

/* Reads what a process says; its end finishes it. */
static void on_pipe(void *arg, int fd, short revents)
{
	struct exporter *x = arg;
	size_t i = 0;

	(void)revents;
	while (i < x->n && x->procs[i].fd != fd)
		i++;
	if (i == x->n)
		return;
	struct export_proc *e = &x->procs[i];
	if (e->cap - e->len < 4096) {
		unsigned char *grown = array_reserve(e->buf, &e->cap, e->len + 4096, 1);
		if (!grown) {
			kill(e->pid, SIGKILL);
			finish(x, i);
			return;
		}
		e->buf = grown;
	}
	ssize_t r = read(fd, e->buf + e->len, e->cap - e->len);
	if (r > 0)
		e->len += (size_t)r;
	else if (r == 0 || (errno != EINTR && errno != EAGAIN))
		finish(x, i);
}

/* Tells done that none of ws[0..nw) was sent, for err. */
static int refused(struct exporter *x, const struct clickhouse_window *ws, size_t nw, int err,
		   const char *why)
{
	int64_t start[EXPORT_BATCH_MAX];
	size_t n = nw < EXPORT_BATCH_MAX ? nw : EXPORT_BATCH_MAX;

	for (size_t k = 0; k < n; k++)
		start[k] = ws[k].w->start_ns;
	x->done(x->arg, start, n, err, why ? why : strerror(-err));
	return err;
}

int exporter_send(struct exporter *x, const struct clickhouse_window *ws, size_t nw, int again)
{
	int fds[2];

	if (nw > EXPORT_BATCH_MAX)
		return refused(x, ws, nw, -EINVAL, "more windows than one export sends");
	if (x->n == EXPORT_PROCESSES)
		return refused(x, ws, nw, -EBUSY,
			       "every exporting process is still busy with an earlier window");
	if (pipe2(fds, O_CLOEXEC) != 0)
		return refused(x, ws, nw, -errno, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		export_child(x, fds[1], ws, nw, again ? CLICKHOUSE_AGAIN : 0);
	}
	close(fds[1]);
	int err = pid < 0 ? -errno : evloop_add(x->loop, fds[0], 0, on_pipe, x);
	if (err) {
		close(fds[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return refused(x, ws, nw, err, NULL);
	}
	struct export_proc *e = &x->procs[x->n++];
	*e = (struct export_proc){.pid = pid, .fd = fds[0], .nw = nw};
	for (size_t k = 0; k < nw; k++)
		e->start_ns[k] = ws[k].w->start_ns;
	return 0;
}

void exporter_on_retained(struct exporter *x, export_retained_fn fn)
{
	x->retained = fn;
}

size_t exporter_room(const struct exporter *x)
{
	return EXPORT_PROCESSES - x->n;
}

int exporter_sending(const struct exporter *x, int64_t start_ns)
{
	for (size_t i = 0; i < x->n; i++)
		for (size_t k = 0; k < x->procs[i].nw; k++)
			if (x->procs[i].start_ns[k] == start_ns)
				return 1;
	return 0;
}

void exporter_free(struct exporter *x)
{
	if (!x)
		return;
	/* Each ends by its deadline: read to the end, as the loop would. */
	while (x->n)
		on_pipe(x, x->procs[x->n - 1].fd, 0);
	free(x);
}
