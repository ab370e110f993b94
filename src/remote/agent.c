/*
 * The agent's connections and the commands they run (see agent.h).
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/frame.h"
#include "remote/node-files.h"
#include "remote/outq.h"
#include "remote/tls.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/progress.h"
#include "util/tcp.h"

/* From a connection's accept to its request (TLS handshake, Hello, clock
 * questions and all): past this, the connection is closed. */
#define HELLO_TIMEOUT_MS 10000
/* The longest frame taken before the request: a Run's arguments. */
#define REQUEST_FRAME_MAX (256u << 10)
#define KILL_GRACE_NS	  2000000000ULL /* between SIGINT and SIGKILL of a command */

/* Who is at the other end of a connection. */
struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int switch_user; /* run the command as uid/gid */
	char cert[256];	 /* over TLS: the client certificate's name */
};

static int send_error(int fd, uint64_t id, const char *msg)
{
	Recce__Agent__Error err = RECCE__AGENT__ERROR__INIT;

	err.message = (char *)msg;
	return frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_ERROR, &err);
}

static int send_hello(int fd)
{
	Recce__Agent__Hello h = RECCE__AGENT__HELLO__INIT;
	char *caps[] = {"run", "cancel", "files"};
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	h.version = FRAME_VERSION;
	h.capabilities = caps;
	h.n_capabilities = sizeof(caps) / sizeof(caps[0]);
	h.node = host;
	h.time_ns = (int64_t)time_now_ns(CLOCK_REALTIME);
	return frame_send_msg(fd, 0, RECCE__AGENT__ENVELOPE__BODY_HELLO, &h);
}

/* A word of the audit log as the client sent it, but on one line and
 * unambiguous: as it is when it holds only plain characters, else in
 * bash's $'...' quoting with every other byte escaped, so that nothing a
 * client sends can start a line or pass for another word. */
static void audit_word(FILE *f, const char *w)
{
	const unsigned char *s = (const unsigned char *)w;
	size_t plain = strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789_-+=.,:/@%^");

	if (*w && !w[plain]) {
		fputs(w, f);
		return;
	}
	fputs("$'", f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20 || *s >= 0x7f)
			fprintf(f, "\\x%02x", *s);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* One line of the audit log: when, who, the command; "denied" before
 * the command when it was refused for its scope, and why after it when
 * the command itself refused (cli/grant.h). */
static void audit(const char *path, const struct peer *p, const Recce__Agent__Run *run, int denied,
		  const char *why)
{
	if (!path)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	FILE *f = fdopen(fd, "a");
	if (!f) {
		close(fd);
		return;
	}
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fprintf(f, "%s ", when);
	if (p->cert[0]) {
		fputs("cert=", f);
		audit_word(f, p->cert);
	} else {
		fprintf(f, "uid=%u pid=%d", (unsigned)p->uid, (int)p->pid);
	}
	fprintf(f, " %srecce", denied ? "denied " : "");
	for (size_t i = 0; i < run->n_argv; i++) {
		fputc(' ', f);
		audit_word(f, run->argv[i]);
	}
	if (why) {
		fputs(" # ", f);
		audit_word(f, why);
	}
	fputc('\n', f);
	fclose(f);
}

/* Why a Run cannot be taken, or NULL. */
static const char *refuse(const Recce__Agent__Run *run)
{
	if (!run->n_argv || !run->argv[0][0])
		return "no command to run";
	if (run->argv[0][0] == '-' || strcmp(run->argv[0], "agent") == 0)
		return "the agent runs recce's commands, not the agent itself or a global option";
	for (size_t i = 0; i < run->n_outputs + run->n_keep; i++) {
		const char *o =
		    i < run->n_outputs ? run->outputs[i] : run->keep[i - run->n_outputs];
		if (!*o || strchr(o, '/') || strcmp(o, ".") == 0 || strcmp(o, "..") == 0)
			return "an output file is named by its base name only";
	}
	return NULL;
}

/* The client's directory of kept files (remote/node-files.h). */
static int peer_files(const struct agent_config *cfg, const struct peer *p, char *dir, size_t len)
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
static void peer_name(const struct peer *p, char *buf, size_t len)
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
	peer_name(p, who, sizeof(who));
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
static int run_command(const struct agent_config *cfg, struct frame_conn *c, int wfd, uint64_t id,
		       const Recce__Agent__Run *run, const struct peer *p, unsigned scopes)
{
	struct workdir dir;
	int out[2], err[2], prog[2], verdict[2];

	if (workdir_make(&dir, p) < 0)
		return send_error(wfd, id, "the agent cannot make a directory for the command");
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
		audit(cfg->audit, p, run, 1, why);
	}
	for (size_t i = 0; !client_gone && i < run->n_outputs && !rc; i++)
		rc = node_files_send(wfd, id, dir.fd, run->outputs[i]);
	/* Kept files stay, whether the client is still there or not. */
	char kept[4096];
	if (run->n_keep && peer_files(cfg, p, kept, sizeof(kept)) == 0)
		node_files_keep(dir.fd, kept, run->keep, run->n_keep);
	if (!client_gone && !rc) {
		Recce__Agent__Exit ex = RECCE__AGENT__EXIT__INIT;
		ex.status = code;
		rc = frame_send_msg(wfd, id, RECCE__AGENT__ENVELOPE__BODY_EXIT, &ex);
	}
	workdir_remove(&dir);
	return rc;
}

/* The scopes of the client. */
static unsigned peer_scopes(const struct agent_config *cfg, const struct peer *p)
{
	static const struct scopes none; /* the defaults of scopes_of() */

	return scopes_of(cfg->scopes ? cfg->scopes : &none, p->cert, p->uid);
}

/* Whether the client's scopes leave the command out by its name alone;
 * msg says why. What its options need, the command asks itself. */
static int out_of_scope(const struct agent_config *cfg, const struct peer *p,
			const Recce__Agent__Run *run, char *msg, size_t len)
{
	char who[300];
	unsigned need = scope_needed(run->argv[0]);
	unsigned have = peer_scopes(cfg, p);

	if (need && !(need & ~have))
		return 0;
	if (!need) {
		snprintf(msg, len, "'%s' is not a command the agent runs", run->argv[0]);
		return 1;
	}
	peer_name(p, who, sizeof(who));
	if (!have) {
		snprintf(msg, len, "this agent denies %s every request", who);
		return 1;
	}
	scope_refusal(msg, len, who, have, run->argv[0], need);
	return 1;
}

/* A Files request: the client's kept files listed or sent, as the
 * commands `files` and `fetch` (read scope) in the audit log. */
static int serve_files(const struct agent_config *cfg, int wfd, uint64_t id,
		       const Recce__Agent__Files *f, const struct peer *p)
{
	char msg[1024], dir[4096];
	char **argv = calloc(f->n_fetch + 1, sizeof(*argv));
	Recce__Agent__Run as = RECCE__AGENT__RUN__INIT;

	if (!argv)
		return -ENOMEM;
	argv[0] = f->n_fetch ? "fetch" : "files";
	for (size_t i = 0; i < f->n_fetch; i++)
		argv[i + 1] = f->fetch[i];
	as.argv = argv;
	as.n_argv = f->n_fetch + 1;
	as.keep = f->fetch;
	as.n_keep = f->n_fetch;
	const char *why = refuse(&as);
	int rc;
	if (why) {
		rc = send_error(wfd, id, why);
	} else if (out_of_scope(cfg, p, &as, msg, sizeof(msg))) {
		audit(cfg->audit, p, &as, 1, NULL);
		rc = send_error(wfd, id, msg);
	} else if ((rc = peer_files(cfg, p, dir, sizeof(dir))) < 0) {
		snprintf(msg, sizeof(msg), "the agent cannot make the directory of your files: %s",
			 strerror(-rc));
		rc = send_error(wfd, id, msg);
	} else {
		audit(cfg->audit, p, &as, 0, NULL);
		rc = node_files_answer(wfd, id, dir, f->fetch, f->n_fetch, f->remove);
	}
	free(argv);
	return rc;
}

/* The milliseconds until deadline (CLOCK_MONOTONIC ns), at least 1. */
static int left_ms(uint64_t deadline)
{
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);

	return now + 1000000 >= deadline ? 1 : (int)((deadline - now) / 1000000);
}

/* One connection: hello, one command, its end. The request comes by
 * deadline; then, on notify (if >= 0), this process says so to the
 * agent, which from then on counts it as a client it serves rather
 * than one it may drop. */
static int serve_connection(const struct agent_config *cfg, int rfd, int wfd, const struct peer *p,
			    uint64_t deadline, int notify)
{
	char msg[1024];
	struct frame_conn c;
	Envelope *e = NULL;
	int rc;

	frame_conn_init(&c, rfd);
	c.max = REQUEST_FRAME_MAX;
	if ((rc = send_hello(wfd)) < 0)
		goto out;
	rc = frame_conn_wait(&c, &e, left_ms(deadline));
	if (rc <= 0 || e->body_case != RECCE__AGENT__ENVELOPE__BODY_HELLO) {
		rc = rc < 0 ? rc : -EPROTO;
		goto out;
	}
	/* Clock questions are answered as they come, before the request,
	 * and all of it by the deadline. */
	for (;;) {
		frame_free(e);
		e = NULL;
		rc = frame_conn_wait(&c, &e, left_ms(deadline));
		if (rc <= 0) {
			rc = rc < 0 ? rc : 0;
			goto out;
		}
		if (e->body_case != RECCE__AGENT__ENVELOPE__BODY_CLOCK)
			break;
		Recce__Agent__Clock now = RECCE__AGENT__CLOCK__INIT;
		now.time_ns = (int64_t)time_now_ns(CLOCK_REALTIME);
		if ((rc = frame_send_msg(wfd, e->id, RECCE__AGENT__ENVELOPE__BODY_CLOCK, &now)) < 0)
			goto out;
	}
	if (notify >= 0) {
		pid_t me = getpid();
		if (write(notify, &me, sizeof(me)) < 0) {
			/* The agent drops it as it would a silent one. */
		}
		close(notify);
	}
	if (e->body_case == RECCE__AGENT__ENVELOPE__BODY_FILES) {
		rc = serve_files(cfg, wfd, e->id, e->files, p);
		goto out;
	}
	if (e->body_case != RECCE__AGENT__ENVELOPE__BODY_RUN) {
		rc = send_error(wfd, e->id, "this agent takes Run and Files requests only");
		goto out;
	}
	const char *why = refuse(e->run);
	if (why) {
		rc = send_error(wfd, e->id, why);
		goto out;
	}
	if (out_of_scope(cfg, p, e->run, msg, sizeof(msg))) {
		audit(cfg->audit, p, e->run, 1, NULL);
		rc = send_error(wfd, e->id, msg);
		goto out;
	}
	audit(cfg->audit, p, e->run, 0, NULL);
	rc = run_command(cfg, &c, wfd, e->id, e->run, p, peer_scopes(cfg, p));
out:
	frame_free(e);
	frame_conn_release(&c);
	return rc;
}

static int peer_of(int fd, struct peer *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	p->uid = cred.uid;
	p->gid = cred.gid;
	p->pid = cred.pid;
	/* Root serving another user: the command runs as that user. */
	p->switch_user = geteuid() == 0 && cred.uid != 0;
	if (geteuid() != 0 && cred.uid != geteuid() && cred.uid != 0)
		return -EACCES;
	return 0;
}

/* Makes the socket's directory (0700) and the socket (0600). */
static int listen_on(const char *path, const char **what)
{
	struct sockaddr_un a;
	char dir[sizeof(a.sun_path)];

	if (strlen(path) >= sizeof(a.sun_path)) {
		*what = "the socket's path is too long";
		return -ENAMETOOLONG;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			*what = "cannot make the socket's directory";
			return -errno;
		}
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*what = "cannot make a socket";
		return -errno;
	}
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	/* A socket left by an agent that died is replaced; one that answers
	 * belongs to an agent still running. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		*what = "another agent serves this socket";
		return -EADDRINUSE;
	}
	unlink(path);
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || listen(fd, 16) < 0) {
		*what = "cannot listen on the socket";
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* A connection's process: TLS first for TCP, then the protocol. */
static void serve_accepted(const struct agent_config *cfg, int fd, int tcp, struct peer *p,
			   uint64_t deadline, int notify)
{
	if (tcp) {
		struct tls_peer tp;
		char err[512];
		int plain = tls_accept(cfg->tls, fd, left_ms(deadline), &tp, err, sizeof(err));
		if (plain < 0) {
			dprintf(2, "recce: refused a TLS client: %s\n", err);
			_exit(1);
		}
		snprintf(p->cert, sizeof(p->cert), "%s", tp.name);
		fd = plain;
	}
	int rc = serve_connection(cfg, fd, fd, p, deadline, notify);
	if (tcp) {
		/* The relay still holds what was written last (an Error, an
		 * Exit): let it reach the client before the process goes. */
		close(fd);
		tls_relays_wait(2000);
	}
	_exit(rc < 0 ? 1 : 0);
}

/* The agent's connection processes: until one has its request, it is a
 * client that has proved nothing, and may be dropped. */
struct conn {
	pid_t pid;
	uint64_t since; /* accepted, CLOCK_MONOTONIC ns */
	int served;	/* its request came */
};

struct conns {
	struct conn v[AGENT_MAX_CONNECTIONS];
	size_t n;
};

static void conns_reap(struct conns *cs)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		for (size_t i = 0; i < cs->n; i++)
			if (cs->v[i].pid == pid) {
				cs->v[i] = cs->v[--cs->n];
				break;
			}
}

/* The requests that came, read from the notify pipe. */
static void conns_served(struct conns *cs, int fd)
{
	pid_t pids[64];
	ssize_t n;

	while ((n = read(fd, pids, sizeof(pids))) > 0)
		for (size_t k = 0; k < (size_t)n / sizeof(pid_t); k++)
			for (size_t i = 0; i < cs->n; i++)
				if (cs->v[i].pid == pids[k])
					cs->v[i].served = 1;
}

/* Ends the connections past their deadline without a request. */
static void conns_expire(struct conns *cs, uint64_t now)
{
	for (size_t i = 0; i < cs->n; i++)
		if (!cs->v[i].served && now >= cs->v[i].since + HELLO_TIMEOUT_MS * 1000000ULL)
			kill(cs->v[i].pid, SIGKILL); /* reaped by conns_reap */
}

/* Room for a new connection: at the cap, the oldest that has not made
 * its request yet is dropped; when every one has, there is none. */
static int conns_room(struct conns *cs)
{
	size_t oldest = cs->n;

	if (cs->n < AGENT_MAX_CONNECTIONS)
		return 1;
	for (size_t i = 0; i < cs->n; i++)
		if (!cs->v[i].served && (oldest == cs->n || cs->v[i].since < cs->v[oldest].since))
			oldest = i;
	if (oldest == cs->n)
		return 0;
	kill(cs->v[oldest].pid, SIGKILL);
	waitpid(cs->v[oldest].pid, NULL, 0);
	cs->v[oldest] = cs->v[--cs->n];
	return 1;
}

/* What the accepting loop of agent_serve() holds. */
struct listener {
	const struct agent_config *cfg;
	int lfd, tfd; /* the local socket, --listen's (or -1) */
	int *served;  /* the pipe connection processes say they have a request on */
	struct conns *cs;
};

static void on_stop(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	evloop_stop(arg, 0);
}

/* After every wake: connections that ended, have their request, or took
 * too long to give one. */
static void on_round(void *arg)
{
	struct listener *l = arg;

	conns_reap(l->cs);
	conns_served(l->cs, l->served[0]);
	conns_expire(l->cs, time_now_ns(CLOCK_MONOTONIC));
}

/* A client at the local socket or --listen's: a process of its own. */
static void on_accept(void *arg, int lfd, short revents)
{
	struct listener *l = arg;
	const struct agent_config *cfg = l->cfg;
	int tcp = lfd == l->tfd;

	(void)revents;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct peer p = {geteuid(), getegid(), 0, 0, ""};
	if (!tcp && peer_of(fd, &p) < 0) {
		send_error(fd, 0, "this agent serves its own user and root only");
		close(fd);
		return;
	}
	conns_reap(l->cs);
	conns_served(l->cs, l->served[0]);
	if (!conns_room(l->cs)) {
		if (!tcp)
			send_error(fd, 0, "this agent serves as many clients as it can");
		close(fd);
		return;
	}
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	pid_t pid = fork();
	if (pid == 0) {
		close(l->lfd);
		if (l->tfd >= 0)
			close(l->tfd);
		if (cfg->stop_fd >= 0)
			close(cfg->stop_fd);
		close(l->served[0]);
		serve_accepted(cfg, fd, tcp, &p, now + HELLO_TIMEOUT_MS * 1000000ULL, l->served[1]);
	}
	if (pid > 0)
		l->cs->v[l->cs->n++] = (struct conn){pid, now, 0};
	close(fd);
}

int agent_serve(const struct agent_config *cfg, const char **what)
{
	signal(SIGPIPE, SIG_IGN);
	if (cfg->stdio) {
		struct peer p = {getuid(), getgid(), getppid(), 0, ""};
		return serve_connection(
		    cfg, 0, 1, &p, time_now_ns(CLOCK_MONOTONIC) + HELLO_TIMEOUT_MS * 1000000ULL,
		    -1);
	}
	int lfd = listen_on(cfg->socket, what);
	if (lfd < 0)
		return lfd;
	char bound[300];
	int tfd = cfg->listen ? tcp_listen(cfg->listen, bound, sizeof(bound)) : -1;
	if (cfg->listen && tfd < 0) {
		*what = tfd == -EINVAL ? "--listen wants [ADDR:]PORT"
				       : "cannot listen on --listen's address";
		close(lfd);
		unlink(cfg->socket);
		return tfd;
	}
	int served[2];
	if (pipe2(served, O_CLOEXEC | O_NONBLOCK) < 0) {
		*what = "cannot make a pipe";
		close(lfd);
		if (tfd >= 0)
			close(tfd);
		unlink(cfg->socket);
		return -errno;
	}
	static struct conns cs;
	struct listener l = {cfg, lfd, tfd, served, &cs};
	struct evloop loop;
	evloop_init(&loop);
	int err = evloop_add(&loop, cfg->stop_fd, 0, on_stop, &loop);
	if (!err)
		err = evloop_add(&loop, served[0], 0, NULL, &l);
	if (!err)
		err = evloop_add(&loop, lfd, 0, on_accept, &l);
	if (!err)
		err = evloop_add(&loop, tfd, 0, on_accept, &l);
	/* A client that proved nothing goes within a second of its time. */
	int id = err ? err : evloop_timer_add(&loop, 0, 1000000000LL, NULL, &l);
	if (id >= 0)
		err = evloop_check_add(&loop, on_round, &l);
	else
		err = id;
	if (!err)
		evloop_run(&loop);
	evloop_release(&loop);
	close(served[0]);
	close(served[1]);
	close(lfd);
	if (tfd >= 0)
		close(tfd);
	unlink(cfg->socket);
	return 0;
}
