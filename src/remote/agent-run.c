/*
 * A client's command on the agent (see agent.h): the client's directory
 * of kept files, the command's own work directory, the child that runs
 * it as the client's user, and the relay of its output, errors and
 * progress to the client, which a slow or gone client cannot stall.
 */
#include "remote/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/agent-internal.h"
#include "remote/frame.h"
#include "remote/node-files.h"
#include "remote/outq.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/progress.h"

#define KILL_GRACE_NS 2000000000ULL /* between SIGINT and SIGKILL of a command */

/* The client's directory of kept files (remote/node-files.h). */
int agent_peer_files(const struct agent_config *cfg, const struct peer *p, char *dir, size_t len)
{
	char base[4096];

	if (!cfg->files)
		return -ENOENT;
	snprintf(base, sizeof(base), "%s", cfg->files);
	return node_files_dir(base, p->cert, p->uid, p->gid, p->switch_user, dir, len);
}

/* The command's private directory: "work" inside a directory of the
 * agent's own in /tmp (0711, the agent's user's), which nobody else can
 * rename or change, so the path is never another's to swap. The client
 * owns "work" when its command runs as its user, and may put anything in
 * it; the agent only ever reaches into it through fd, with no link
 * followed. */
struct workdir {
	char top[32];
	int top_fd;
	int fd;
};

static int workdir_make(struct workdir *w, const struct peer *p)
{
	snprintf(w->top, sizeof(w->top), "/tmp/recce-agent-XXXXXX");
	w->top_fd = w->fd = -1;
	if (!mkdtemp(w->top))
		return -errno;
	int err = 0;
	w->top_fd = open(w->top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->top_fd < 0 || fchmod(w->top_fd, 0711) < 0 || mkdirat(w->top_fd, "work", 0700) < 0 ||
	    (w->fd = openat(w->top_fd, "work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
		0 ||
	    (p->switch_user && fchown(w->fd, p->uid, p->gid) < 0))
		err = -errno;
	if (err) {
		if (w->fd >= 0)
			close(w->fd);
		if (w->top_fd >= 0) {
			unlinkat(w->top_fd, "work", AT_REMOVEDIR);
			close(w->top_fd);
		}
		rmdir(w->top);
		w->top_fd = w->fd = -1;
	}
	return err;
}

/* Removes what is in the directory of fd, through descriptors: a link is
 * removed, never followed; depth bounds what a client can make us do. */
static void remove_under(int fd, int depth)
{
	int scan = dup(fd);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;

	if (!d) {
		if (scan >= 0)
			close(scan);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0 || errno != EISDIR || depth >= 16)
			continue;
		int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			remove_under(sub, depth + 1);
			close(sub);
		}
		unlinkat(fd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

static void workdir_remove(struct workdir *w)
{
	if (w->fd >= 0) {
		remove_under(w->fd, 0);
		close(w->fd);
	}
	if (w->top_fd >= 0) {
		unlinkat(w->top_fd, "work", AT_REMOVEDIR);
		close(w->top_fd);
	}
	rmdir(w->top);
}

/* "cert:NAME" or "uid:N": the client, as grants name it. */
void agent_peer_name(const struct peer *p, char *buf, size_t len)
{
	if (p->cert[0])
		snprintf(buf, len, "cert:%s", p->cert);
	else
		snprintf(buf, len, "uid:%u", (unsigned)p->uid);
}

/* The command's child: in dir, as the peer, stdout and stderr to the
 * pipes, its progress lines (util/progress.h) to fd 3, a refusal of its
 * own (cli/grant.h) to fd 4, with the client's scopes in the
 * environment. Never returns. */
static void run_child(const char *self, const Recce__Agent__Run *run, int dir, const struct peer *p,
		      unsigned scopes, int out, int err, int prog, int verdict)
{
	char **argv = calloc(run->n_argv + 2, sizeof(*argv));
	char grant[512], names[64], who[300];

	if (!argv)
		_exit(1);
	argv[0] = "recce";
	for (size_t i = 0; i < run->n_argv; i++)
		argv[i + 1] = run->argv[i];
	agent_peer_name(p, who, sizeof(who));
	snprintf(grant, sizeof(grant), "%s 4 %s", scope_names(scopes, names, sizeof(names)), who);
	/* Into the directory first: its descriptor may be one of 0 to 4. */
	if (fchdir(dir) < 0)
		_exit(1);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
	    dup2(prog, 3) < 0 || fcntl(3, F_SETFD, 0) < 0 || dup2(verdict, 4) < 0 ||
	    fcntl(4, F_SETFD, 0) < 0 || setenv(PROGRESS_ENV, "3", 1) < 0 ||
	    setenv(SCOPES_GRANT_ENV, grant, 1) < 0)
		_exit(1);
	if (p->switch_user &&
	    (setgroups(0, NULL) < 0 || setgid(p->gid) < 0 || setuid(p->uid) < 0)) {
		dprintf(2, "recce: the agent cannot run as uid %u: %s\n", (unsigned)p->uid,
			strerror(errno));
		_exit(1);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(self, argv);
	dprintf(2, "recce: the agent cannot run %s: %s\n", self, strerror(errno));
	_exit(1);
}

/* A line of a pipe read in pieces. */
struct partial {
	char text[1024];
	size_t len;
};

/* The command's progress lines (util/progress.h) read now, sent on as
 * Progress messages; a line that does not parse is left out. */
static int forward_progress(struct outq *q, struct partial *p, const uint8_t *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (data[i] != '\n') {
			if (p->len < sizeof(p->text) - 1)
				p->text[p->len++] = (char)data[i];
			continue;
		}
		const char *what, *unit;
		uint64_t done, total;
		p->text[p->len] = 0;
		p->len = 0;
		if (progress_parse(p->text, &what, &done, &total, &unit) == 0) {
			int err = outq_progress(q, what, done, total, unit);
			if (err)
				return err;
		}
	}
	return 0;
}

/* A command's output on its way to the client: its three pipes (output,
 * errors, progress) read as they fill, into q, which the client is sent
 * from as fast as it reads; a Cancel from the client is the command's
 * SIGINT. Without a client to report to, the command is stopped as
 * Ctrl-C would, then killed KILL_GRACE_NS later. */
struct relay {
	struct frame_conn *c;
	int wfd;
	pid_t child;
	int fds[3]; /* out, err, progress; -1 once at their end */
	int pipes;  /* not at their end */
	struct outq q;
	struct partial said; /* its progress line, read so far */
	int client_gone;
	int writing; /* wfd is watched for room to write */
	uint64_t kill_at;
	int tick_ms, tick_id; /* the wake timer's period, 0: none */
	struct evloop loop;
};

static void on_command_pipe(void *arg, int fd, short revents)
{
	struct relay *r = arg;
	int s = fd == r->fds[0] ? 0 : fd == r->fds[1] ? 1 : 2;
	uint8_t buf[65536];

	(void)revents;
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n <= 0) {
		evloop_remove(&r->loop, fd);
		close(fd);
		r->fds[s] = -1;
		r->pipes--;
		return;
	}
	if (r->client_gone)
		return;
	int rc = s == 2 ? forward_progress(&r->q, &r->said, buf, (size_t)n)
			: outq_output(&r->q, (unsigned)s + 1, buf, (size_t)n);
	if (rc < 0)
		r->client_gone = 1;
}

/* The client's side: a Cancel, or its end. Room to write is taken after
 * the round (relay_round). */
static void on_client(void *arg, int fd, short revents)
{
	struct relay *r = arg;

	(void)fd;
	if (r->client_gone || !(revents & ~POLLOUT))
		return;
	long n = frame_conn_fill(r->c);
	Envelope *e = NULL;
	int got = n > 0 ? frame_conn_next(r->c, &e) : -1;
	if (n <= 0 || got < 0)
		r->client_gone = 1;
	else if (got == 1 && e->body_case == RECCE__AGENT__ENVELOPE__BODY_CANCEL)
		kill(r->child, SIGINT);
	frame_free(e);
}

/* The loop wakes every ms milliseconds from now on (0: only for its
 * descriptors). */
static void relay_tick(struct relay *r, int ms)
{
	if (ms == r->tick_ms)
		return;
	if (r->tick_id > 0)
		evloop_timer_remove(&r->loop, r->tick_id);
	int64_t every = (int64_t)ms * 1000000;
	r->tick_id = ms ? evloop_timer_add(&r->loop, (int64_t)time_now_ns(CLOCK_MONOTONIC) + every,
					   every, NULL, r)
			: 0;
	r->tick_ms = ms;
}

/* After every wake: send what waits, stop a command nobody follows, and
 * watch the client for room to write only while output waits. */
static void relay_round(void *arg)
{
	struct relay *r = arg;
	int same = r->wfd == r->c->fd;

	if (!r->client_gone && outq_flush(&r->q) < 0)
		r->client_gone = 1;
	if (r->client_gone && !r->kill_at) {
		/* Nobody to report to: stop it as Ctrl-C would. */
		kill(r->child, SIGINT);
		r->kill_at = time_now_ns(CLOCK_MONOTONIC) + KILL_GRACE_NS;
		evloop_remove(&r->loop, r->c->fd);
		if (!same)
			evloop_remove(&r->loop, r->wfd);
	}
	if (r->kill_at && time_now_ns(CLOCK_MONOTONIC) >= r->kill_at) {
		kill(r->child, SIGKILL);
		r->kill_at = UINT64_MAX;
	}
	if (!r->pipes) {
		evloop_stop(&r->loop, 0);
		return;
	}
	int writing = !r->client_gone && outq_pending(&r->q) > 0;
	if (!r->client_gone && writing != r->writing) {
		if (same)
			evloop_watch(&r->loop, r->wfd, writing ? POLLIN | POLLOUT : POLLIN);
		else if (writing)
			evloop_add(&r->loop, r->wfd, EVLOOP_WRITE, NULL, r);
		else
			evloop_remove(&r->loop, r->wfd);
		r->writing = writing;
	}
	relay_tick(r, r->kill_at ? 100 : r->q.unreported ? 1000 : 0);
}

/* Relays the command's output until its three pipes end. */
static void relay_output(struct relay *r)
{
	int err = 0;

	evloop_init(&r->loop);
	for (int s = 0; s < 3 && !err; s++)
		err = evloop_add(&r->loop, r->fds[s], 0, on_command_pipe, r);
	if (!err && !r->client_gone)
		err = evloop_add(&r->loop, r->c->fd, 0, on_client, r);
	if (!err)
		err = evloop_check_add(&r->loop, relay_round, r);
	if (!err) {
		relay_round(r);
		if (!evloop_stopped(&r->loop))
			evloop_run(&r->loop);
	}
	evloop_release(&r->loop);
}

/* Runs one command for the client on fd and streams it back. */
int agent_run_command(const struct agent_config *cfg, struct frame_conn *c, int wfd, uint64_t id,
		      const Recce__Agent__Run *run, const struct peer *p, unsigned scopes)
{
	struct workdir dir;
	int out[2], err[2], prog[2], verdict[2];

	if (workdir_make(&dir, p) < 0)
		return agent_send_error(wfd, id,
					"the agent cannot make a directory for the command");
	int *pipes_made[] = {out, err, prog, verdict};
	size_t made = 0;
	while (made < 4 && pipe2(pipes_made[made], O_CLOEXEC) == 0)
		made++;
	if (made < 4 || fcntl(prog[1], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(verdict[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;
		for (size_t i = 0; i < made; i++) {
			close(pipes_made[i][0]);
			close(pipes_made[i][1]);
		}
		workdir_remove(&dir);
		return -e;
	}
	pid_t child = fork();
	if (child == 0)
		run_child(cfg->self, run, dir.fd, p, scopes, out[1], err[1], prog[1], verdict[1]);
	close(out[1]);
	close(err[1]);
	close(prog[1]);
	close(verdict[1]);
	struct relay r = {.c = c, .wfd = wfd, .child = child, .pipes = 3};
	r.fds[0] = out[0], r.fds[1] = err[0], r.fds[2] = prog[0];
	int status = 0, rc = 0;
	r.client_gone = outq_init(&r.q, wfd, id, cfg->client_buffer) < 0;
	if (child > 0)
		relay_output(&r);
	for (int s = 0; s < 3; s++)
		if (r.fds[s] >= 0)
			close(r.fds[s]);
	int client_gone = r.client_gone;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!client_gone && outq_finish(&r.q) < 0)
		client_gone = 1;
	outq_release(&r.q);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* What the command refused for the client's scopes goes to the
	 * audit log as denied. */
	char why[1024];
	ssize_t said_no = read(verdict[0], why, sizeof(why) - 1);
	close(verdict[0]);
	if (said_no > 0) {
		why[said_no] = 0;
		why[strcspn(why, "\n")] = 0;
		agent_audit(cfg->audit, p, run, 1, why);
	}
	for (size_t i = 0; !client_gone && i < run->n_outputs && !rc; i++)
		rc = node_files_send(wfd, id, dir.fd, run->outputs[i]);
	/* Kept files stay, whether the client is still there or not. */
	char kept[4096];
	if (run->n_keep && agent_peer_files(cfg, p, kept, sizeof(kept)) == 0)
		node_files_keep(dir.fd, kept, run->keep, run->n_keep);
	if (!client_gone && !rc) {
		Recce__Agent__Exit ex = RECCE__AGENT__EXIT__INIT;
		ex.status = code;
		rc = frame_send_msg(wfd, id, RECCE__AGENT__ENVELOPE__BODY_EXIT, &ex);
	}
	workdir_remove(&dir);
	return rc;
}
