/*
 * The agent's connections and the commands they run (see agent.h).
 */
#include "remote/agent.h"

#include <errno.h>
#include <fcntl.h>
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

#include "remote/agent-internal.h"
#include "remote/frame.h"
#include "remote/node-files.h"
#include "remote/tls.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/tcp.h"

/* From a connection's accept to its request (TLS handshake, Hello, clock
 * questions and all): past this, the connection is closed. */
#define HELLO_TIMEOUT_MS 10000
/* The longest frame taken before the request: a Run's arguments. */
#define REQUEST_FRAME_MAX (256u << 10)

int agent_send_error(int fd, uint64_t id, const char *msg)
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
void agent_audit(const char *path, const struct peer *p, const Recce__Agent__Run *run, int denied,
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
	agent_peer_name(p, who, sizeof(who));
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
		rc = agent_send_error(wfd, id, why);
	} else if (out_of_scope(cfg, p, &as, msg, sizeof(msg))) {
		agent_audit(cfg->audit, p, &as, 1, NULL);
		rc = agent_send_error(wfd, id, msg);
	} else if ((rc = agent_peer_files(cfg, p, dir, sizeof(dir))) < 0) {
		snprintf(msg, sizeof(msg), "the agent cannot make the directory of your files: %s",
			 strerror(-rc));
		rc = agent_send_error(wfd, id, msg);
	} else {
		agent_audit(cfg->audit, p, &as, 0, NULL);
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
		rc = agent_send_error(wfd, e->id, "this agent takes Run and Files requests only");
		goto out;
	}
	const char *why = refuse(e->run);
	if (why) {
		rc = agent_send_error(wfd, e->id, why);
		goto out;
	}
	if (out_of_scope(cfg, p, e->run, msg, sizeof(msg))) {
		agent_audit(cfg->audit, p, e->run, 1, NULL);
		rc = agent_send_error(wfd, e->id, msg);
		goto out;
	}
	agent_audit(cfg->audit, p, e->run, 0, NULL);
	rc = agent_run_command(cfg, &c, wfd, e->id, e->run, p, peer_scopes(cfg, p));
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

/* The connections' processes that ended; the agent's other children
 * (the continuous profiler) are their keeper's to reap. */
static void conns_reap(struct conns *cs)
{
	for (size_t i = 0; i < cs->n;)
		if (waitpid(cs->v[i].pid, NULL, WNOHANG) != 0)
			cs->v[i] = cs->v[--cs->n];
		else
			i++;
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
		agent_send_error(fd, 0, "this agent serves its own user and root only");
		close(fd);
		return;
	}
	conns_reap(l->cs);
	conns_served(l->cs, l->served[0]);
	if (!conns_room(l->cs)) {
		if (!tcp)
			agent_send_error(fd, 0, "this agent serves as many clients as it can");
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
	if (!err && cfg->attach)
		err = cfg->attach(cfg->attach_arg, &loop);
	if (!err)
		evloop_run(&loop);
	else
		*what = "cannot start serving";
	evloop_release(&loop);
	close(served[0]);
	close(served[1]);
	close(lfd);
	if (tfd >= 0)
		close(tfd);
	unlink(cfg->socket);
	return err;
}
