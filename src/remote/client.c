/*
 * Running a command on an agent (see client.h).
 */
#include "remote/client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/frame.h"
#include "remote/tls.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/path.h"
#include "util/readall.h"
#include "util/tcp.h"

#define CLOCK_ROUNDS 5 /* clock questions of remote_clock() */

/* An -o file: its path here and its name on the node. It is written
 * as a local -o is (util/outfile.h): whole or absent, never through a
 * link another user planted, a device or FIFO written in place. */
enum output_state { OUT_WAITING, OUT_OPEN, OUT_DONE, OUT_FAILED };
struct output {
	const char *local;
	char *name;
	enum output_state state;
	struct outfile file; /* while OUT_OPEN */
};

struct client {
	const struct remote_config *cfg;
	const char *node;
	int rfd, wfd;
	pid_t ssh; /* the SSH client, if any */
	struct output *outs;
	size_t nouts, outs_cap;
	char **keep; /* -o sets of a --wrap trace: they stay on the node */
	size_t nkeep;
	int fetching;	  /* fetch: every file that comes is written here */
	int write_failed; /* a file that came could not be written here */
	size_t fetched;	  /* files written whole here */
	unsigned long long fetched_bytes;
	int progress;	 /* Progress shown: 0 not, 1 on a line redrawn (a terminal), 2 as lines */
	int progress_up; /* a redrawn line is on the terminal now */
};

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	if (interrupted++) {
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
}

static int connect_unix(struct client *c, const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	c->rfd = c->wfd = fd;
	return 0;
}

/* ssh://[user@]host[:port]: the user's SSH client runs the remote agent
 * on its standard input and output. */
static int connect_ssh(struct client *c, const char *spec)
{
	char host[512], port[16] = "";
	const char *ssh = c->cfg->ssh, *remote = c->cfg->remote;

	snprintf(host, sizeof(host), "%s", spec);
	char *colon = strrchr(host, ':');
	if (colon && !strchr(colon, ']')) {
		snprintf(port, sizeof(port), "%s", colon + 1);
		*colon = 0;
	}
	if (!*host)
		return -EINVAL;
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "exec %s -T %s%s %s %s agent --stdio", ssh && *ssh ? ssh : "ssh",
		 *port ? "-p " : "", port, host, remote && *remote ? remote : "recce");
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		signal(SIGINT, SIG_IGN); /* Ctrl-C goes to the command as a Cancel */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->ssh = pid;
	c->wfd = to[1];
	c->rfd = from[0];
	return 0;
}

/* HOST[:PORT] (or [V6]:PORT): an agent's --listen, over TLS. */
static int connect_tls(struct client *c, const char *spec)
{
	char host[256], port[32], dir[4096], err[512];

	if (tcp_split(spec, 0, "", "7450", host, sizeof(host), port, sizeof(port)) < 0 || !*host)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s", c->cfg->tls_dir ? c->cfg->tls_dir : ".");
	int fd = tls_connect(dir, host, port, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "recce: cannot reach the agent at %s: %s\n", c->node, err);
		return -ECONNREFUSED;
	}
	c->rfd = c->wfd = fd;
	return 0;
}

/* Finds the -o files of argv, and gives the node their base names. */
int remote_keeps_outputs(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--wrap") == 0 || strncmp(argv[i], "--wrap=", 7) == 0)
			return 1;
	return 0;
}

const char *remote_output_arg(int argc, char **argv, int *i, const char **prefix)
{
	const char *a = argv[*i];

	*prefix = "";
	if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && *i + 1 < argc)
		return argv[++*i];
	if (strncmp(a, "--output=", 9) == 0) {
		*prefix = "--output=";
		return a + 9;
	}
	if (strncmp(a, "-o", 2) == 0 && a[2]) {
		*prefix = "-o";
		return a + 2;
	}
	return NULL;
}

static int take_outputs(struct client *c, int argc, char **argv, char ***sent)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));

	*sent = v;
	c->outs = calloc((size_t)argc + 1, sizeof(*c->outs));
	if (!v || !c->outs)
		return -ENOMEM;
	int operands = 0;			     /* after "--": a command's own arguments */
	int wrap = remote_keeps_outputs(argc, argv); /* trace --wrap: its -o set stays there */
	c->outs_cap = (size_t)argc + 1;
	for (int i = 0; i < argc; i++) {
		v[i] = argv[i];
		if (operands || strcmp(argv[i], "--") == 0) {
			operands = 1;
			continue;
		}
		const char *prefix;
		const char *path = remote_output_arg(argc, argv, &i, &prefix);
		if (!path)
			continue;
		if (strcmp(path, "-") == 0) { /* standard output: it streams */
			v[i] = argv[i];
			continue;
		}
		const char *base = path_base(path);
		for (size_t k = 0; k < c->nouts; k++)
			if (strcmp(c->outs[k].name, base) == 0)
				return -EEXIST;
		if (wrap) {
			char **grown = realloc(c->keep, (c->nkeep + 1) * sizeof(*grown));
			if (!grown || !(grown[c->nkeep] = strdup(base)))
				return -ENOMEM;
			c->keep = grown;
			c->nkeep++;
			size_t len = strlen(prefix) + strlen(base) + 1;
			if (!(v[i] = malloc(len)))
				return -ENOMEM;
			snprintf(v[i], len, "%s%s", prefix, base);
			continue;
		}
		struct output *o = &c->outs[c->nouts++];
		o->local = path;
		o->state = OUT_WAITING;
		o->name = strdup(base);
		size_t len = strlen(prefix) + strlen(base) + 1;
		v[i] = malloc(len);
		if (!o->name || !v[i])
			return -ENOMEM;
		snprintf(v[i], len, "%s%s", prefix, base);
	}
	return 0;
}

static void output_write(struct client *c, const Recce__Agent__File *f)
{
	struct output *o = NULL;

	for (size_t i = 0; i < c->nouts && !o; i++)
		if (strcmp(c->outs[i].name, f->name) == 0)
			o = &c->outs[i];
	if (!o && c->fetching && f->name[0] && !strchr(f->name, '/') &&
	    strcmp(f->name, "..") != 0 && strcmp(f->name, ".") != 0) {
		/* A file of a set being fetched: here, by its name on the node. */
		struct output *grown =
		    array_reserve(c->outs, &c->outs_cap, c->nouts + 1, sizeof(*grown));
		char *name = grown ? strdup(f->name) : NULL;
		if (!name)
			return;
		c->outs = grown;
		o = &c->outs[c->nouts++];
		*o = (struct output){name, name, OUT_WAITING, {0}};
	}
	if (!o || o->state == OUT_DONE || o->state == OUT_FAILED)
		return; /* unknown, done, or failed */
	int err = 0;
	if (o->state == OUT_WAITING) {
		if ((err = outfile_open(&o->file, o->local)) < 0) {
			fprintf(stderr, "recce: cannot write '%s': %s\n", o->local, strerror(-err));
			o->state = OUT_FAILED;
			c->write_failed = 1;
			return;
		}
		o->state = OUT_OPEN;
	}
	if (f->data.len && fwrite(f->data.data, 1, f->data.len, o->file.fp) != f->data.len)
		err = errno ? -errno : -EIO;
	c->fetched_bytes += f->data.len;
	if (!err && f->last)
		err = outfile_commit(&o->file);
	else if (err)
		outfile_abort(&o->file); /* whole or not at all */
	if (err) {
		fprintf(stderr, "recce: cannot write '%s': %s\n", o->local, strerror(-err));
		o->state = OUT_FAILED;
		c->write_failed = 1;
		return;
	}
	if (f->last) {
		o->state = OUT_DONE;
		c->fetched++;
	}
}

/* The client's files on the node, as `ls -l` would list them. */
static void print_list(const Recce__Agent__FileList *l)
{
	if (!l->n_files) {
		printf("no files are kept on this node\n");
		return;
	}
	printf("%-32s %12s  %s\n", "name", "bytes", "written");
	for (size_t i = 0; i < l->n_files; i++) {
		char when[32];
		time_t t = (time_t)(l->files[i]->mtime_ns / 1000000000);
		struct tm tm;
		if (!localtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "@%lld", (long long)t);
		printf("%-32s %12llu  %s\n", l->files[i]->name,
		       (unsigned long long)l->files[i]->size, when);
	}
}

/* How Progress is shown: redrawn on a terminal, as lines where the
 * caller asks for them, never where it says so. */
static int progress_mode(const struct remote_config *cfg)
{
	if (cfg->progress == 0)
		return 0;
	return isatty(STDERR_FILENO) ? 1 : cfg->progress > 0 ? 2 : 0;
}

/* An amount in its unit: 12.0 MiB for bytes, 3.0 s for ms, 120 windows. */
static void amount(char *buf, size_t len, uint64_t v, const char *unit)
{
	if (strcmp(unit, "ms") == 0)
		snprintf(buf, len, "%.1f s", (double)v / 1e3);
	else if (strcmp(unit, "bytes") == 0 && v >= 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", (double)v / (1024.0 * 1024.0));
	else if (strcmp(unit, "bytes") == 0 && v >= 1024)
		snprintf(buf, len, "%.1f KiB", (double)v / 1024.0);
	else
		snprintf(buf, len, "%llu %s", (unsigned long long)v, unit);
}

/* Takes a redrawn progress line off the terminal, before other output. */
static void progress_clear(struct client *c)
{
	if (c->progress_up)
		write_all(STDERR_FILENO, "\r\033[K", 4);
	c->progress_up = 0;
}

/* "recce: NODE: recording: 3 s of 10 s (30%)". */
static void progress_show(struct client *c, const Recce__Agent__Progress *p)
{
	char line[600], done[64], total[64] = "";
	const char *unit = p->unit && *p->unit ? p->unit : "";

	if (!c->progress)
		return;
	amount(done, sizeof(done), p->done, unit);
	if (p->total)
		amount(total, sizeof(total), p->total, unit);
	int n = snprintf(line, sizeof(line), "%srecce: %s: %.200s: %s%s%s",
			 c->progress == 1 ? "\r\033[K" : "", c->node, p->what ? p->what : "", done,
			 p->total ? " of " : "", total);
	if (p->total && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, " (%.0f%%)",
			      100.0 * (double)p->done / (double)p->total);
	if (n > 0 && (size_t)n < sizeof(line) - 1) {
		if (c->progress == 2)
			line[n++] = '\n';
		write_all(STDERR_FILENO, line, (size_t)n);
		c->progress_up = c->progress == 1;
	}
}

/* Reads the command's frames until its exit. */
static int follow(struct client *c)
{
	struct frame_conn conn;
	int status = -1, cancelled = 0;

	frame_conn_init(&conn, c->rfd);
	while (status < 0) {
		if (interrupted && !cancelled) {
			Recce__Agent__Cancel k = RECCE__AGENT__CANCEL__INIT;
			frame_send_msg(c->wfd, 1, RECCE__AGENT__ENVELOPE__BODY_CANCEL, &k);
			cancelled = 1;
		}
		Envelope *e = NULL;
		int rc = frame_conn_wait(&conn, &e, 200);
		if (rc == -ETIMEDOUT || rc == -EINTR)
			continue;
		if (rc <= 0) {
			progress_clear(c);
			fprintf(stderr,
				"recce: the agent at %s went away before the command ended%s%s\n",
				c->node, rc < 0 ? ": " : "", rc < 0 ? strerror(-rc) : "");
			status = 1;
			break;
		}
		if (e->body_case != RECCE__AGENT__ENVELOPE__BODY_PROGRESS)
			progress_clear(c);
		switch (e->body_case) {
		case RECCE__AGENT__ENVELOPE__BODY_PROGRESS:
			progress_show(c, e->progress);
			break;
		case RECCE__AGENT__ENVELOPE__BODY_OUTPUT:
			write_all(e->output->stream == 1 ? 1 : 2, e->output->data.data,
				  e->output->data.len); /* a closed terminal loses it, as locally */
			break;
		case RECCE__AGENT__ENVELOPE__BODY_FILE:
			output_write(c, e->file);
			break;
		case RECCE__AGENT__ENVELOPE__BODY_EXIT:
			status = e->exit->status;
			break;
		case RECCE__AGENT__ENVELOPE__BODY_FILE_LIST:
			print_list(e->file_list);
			status = 0;
			break;
		case RECCE__AGENT__ENVELOPE__BODY_ERROR:
			fprintf(stderr, "recce: the agent at %s refused: %s\n", c->node,
				e->error->message);
			status = 1;
			break;
		default:
			break; /* a message this client does not know */
		}
		frame_free(e);
	}
	progress_clear(c);
	frame_conn_release(&conn);
	return status;
}

static int handshake(struct client *c, char **argv, int argc)
{
	struct frame_conn conn;
	Envelope *e = NULL;

	frame_conn_init(&conn, c->rfd);
	int rc = frame_conn_wait(&conn, &e, 30000);
	if (rc <= 0 || e->body_case != RECCE__AGENT__ENVELOPE__BODY_HELLO) {
		if (rc > 0 && e->body_case == RECCE__AGENT__ENVELOPE__BODY_ERROR)
			fprintf(stderr, "recce: the agent at %s refused: %s\n", c->node,
				e->error->message);
		frame_free(e);
		frame_conn_release(&conn);
		return rc < 0 ? rc : -EPROTO;
	}
	/* Frames after the hello would be lost with this buffer: the agent
	 * sends nothing more until it has the Run. */
	frame_free(e);
	frame_conn_release(&conn);

	Recce__Agent__Hello hello = RECCE__AGENT__HELLO__INIT;
	char *caps[] = {"run", "cancel", "files"};
	hello.version = FRAME_VERSION;
	hello.capabilities = caps;
	hello.n_capabilities = 3;
	if ((rc = frame_send_msg(c->wfd, 0, RECCE__AGENT__ENVELOPE__BODY_HELLO, &hello)) < 0)
		return rc;

	if (strcmp(argv[0], "files") == 0 || strcmp(argv[0], "fetch") == 0) {
		Recce__Agent__Files f = RECCE__AGENT__FILES__INIT;
		char **fetch = calloc((size_t)argc, sizeof(*fetch));
		if (!fetch)
			return -ENOMEM;
		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], "--remove") == 0)
				f.remove = 1;
			else
				fetch[f.n_fetch++] = argv[i];
		f.fetch = fetch;
		c->fetching = 1;
		rc = frame_send_msg(c->wfd, 1, RECCE__AGENT__ENVELOPE__BODY_FILES, &f);
		free(fetch);
		return rc;
	}
	Recce__Agent__Run run = RECCE__AGENT__RUN__INIT;
	char **names = calloc(c->nouts + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < c->nouts; i++)
		names[i] = c->outs[i].name;
	run.argv = argv;
	run.n_argv = (size_t)argc;
	run.outputs = names;
	run.n_outputs = c->nouts;
	run.keep = c->keep;
	run.n_keep = c->nkeep;
	rc = frame_send_msg(c->wfd, 1, RECCE__AGENT__ENVELOPE__BODY_RUN, &run);
	free(names);
	return rc;
}

/* Connects to node: unix:PATH or a path, ssh://..., else TLS. */
static int connect_node(struct client *c, const char *node)
{
	if (strncmp(node, "ssh://", 6) == 0)
		return connect_ssh(c, node + 6);
	if (strncmp(node, "unix:", 5) == 0 || strchr(node, '/'))
		return connect_unix(c, strncmp(node, "unix:", 5) == 0 ? node + 5 : node);
	return connect_tls(c, node);
}

static void disconnect(struct client *c)
{
	if (c->wfd >= 0)
		close(c->wfd);
	if (c->rfd >= 0 && c->rfd != c->wfd)
		close(c->rfd);
	c->rfd = c->wfd = -1;
	tls_relays_wait(2000);
	if (c->ssh > 0)
		waitpid(c->ssh, NULL, 0);
}

int remote_clock(const struct remote_config *cfg, const char *node, int64_t *offset_ns,
		 int64_t *rtt_ns)
{
	struct client c = {.cfg = cfg, .node = node, .rfd = -1, .wfd = -1};
	struct frame_conn conn;
	Envelope *e = NULL;

	signal(SIGPIPE, SIG_IGN);
	/* The agent sends its Hello as soon as it serves the connection,
	 * which may be before connect() returns here: its clock then is
	 * taken to be ours halfway from before the connect to the Hello. */
	int64_t t0 = (int64_t)time_now_ns(CLOCK_REALTIME);
	int rc = connect_node(&c, node);
	if (rc < 0)
		return rc;
	frame_conn_init(&conn, c.rfd);
	rc = frame_conn_wait(&conn, &e, 30000);
	int64_t t1 = (int64_t)time_now_ns(CLOCK_REALTIME);
	if (rc > 0 && e->body_case == RECCE__AGENT__ENVELOPE__BODY_HELLO) {
		*rtt_ns = t1 - t0;
		*offset_ns = e->hello->time_ns ? e->hello->time_ns - (t0 + t1) / 2 : 0;
		rc = e->hello->time_ns ? 0 : -ENOTSUP;
	} else {
		rc = rc < 0 ? rc : -EPROTO;
	}
	frame_free(e);
	e = NULL;
	/* The Hello's time waits for the agent to set the connection up;
	 * Clock questions on the open connection are answered at once, and
	 * the shortest round trip bounds the error best. An older agent
	 * answers with an Error: the Hello's estimate stands. */
	Recce__Agent__Hello hello = RECCE__AGENT__HELLO__INIT;
	hello.version = FRAME_VERSION;
	if (rc == 0 && frame_send_msg(c.wfd, 0, RECCE__AGENT__ENVELOPE__BODY_HELLO, &hello) == 0) {
		for (int i = 0; i < CLOCK_ROUNDS; i++) {
			Recce__Agent__Clock q = RECCE__AGENT__CLOCK__INIT;
			t0 = (int64_t)time_now_ns(CLOCK_REALTIME);
			if (frame_send_msg(c.wfd, 1, RECCE__AGENT__ENVELOPE__BODY_CLOCK, &q) < 0 ||
			    frame_conn_wait(&conn, &e, 5000) <= 0)
				break;
			t1 = (int64_t)time_now_ns(CLOCK_REALTIME);
			int got = e->body_case == RECCE__AGENT__ENVELOPE__BODY_CLOCK;
			if (got && t1 - t0 < *rtt_ns) {
				*rtt_ns = t1 - t0;
				*offset_ns = e->clock->time_ns - (t0 + t1) / 2;
			}
			frame_free(e);
			e = NULL;
			if (!got)
				break;
		}
	}
	frame_conn_release(&conn);
	disconnect(&c);
	return rc;
}

int remote_run(const struct remote_config *cfg, const char *node, int argc, char **argv)
{
	struct client c = {
	    .cfg = cfg, .node = node, .rfd = -1, .wfd = -1, .progress = progress_mode(cfg)};
	char **sent = NULL;
	int status = 1;

	signal(SIGPIPE, SIG_IGN);
	int ssh = strncmp(node, "ssh://", 6) == 0;
	int local = !ssh && (strncmp(node, "unix:", 5) == 0 || strchr(node, '/'));
	if (!*node || (strstr(node, "://") && !ssh)) {
		fprintf(stderr, "recce: usage: --node takes HOST[:PORT] (TLS), unix:PATH (a local "
				"agent's socket) or ssh://[USER@]HOST[:PORT]\n");
		return 2;
	}
	int is_files = strcmp(argv[0], "files") == 0, is_fetch = strcmp(argv[0], "fetch") == 0;
	int names = 0;
	for (int i = 1; i < argc; i++)
		names += strcmp(argv[i], "--remove") != 0;
	if ((is_files && argc > 1) || (is_fetch && !names)) {
		fprintf(stderr, "recce: usage: recce --node NODE files | recce --node NODE fetch "
				"NAME... [--remove]\n");
		return 2;
	}
	int rc = take_outputs(&c, argc, argv, &sent);
	if (rc == -EEXIST) {
		fprintf(stderr, "recce: usage: two -o files with the same name cannot come back "
				"from one node\n");
		status = 2;
		goto done;
	}
	if (rc < 0) {
		fprintf(stderr, "recce: out of memory\n");
		goto done;
	}
	rc = connect_node(&c, node);
	if (rc == -ECONNREFUSED && !ssh && !local)
		goto done; /* said */
	if (rc < 0) {
		fprintf(stderr, "recce: cannot reach the agent at %s: %s\n", node, strerror(-rc));
		goto done;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = handshake(&c, sent, argc);
	char tls_why[256];
	if (rc < 0 && *tls_relay_error(tls_why, sizeof(tls_why)))
		fprintf(
		    stderr,
		    "recce: the agent at %s refused this client's certificate (%s): a "
		    "certificate that was revoked, has expired, or is of another CA is refused; "
		    "ask for a new one (recce certs client NAME)\n",
		    node, tls_why);
	else if (rc < 0)
		fprintf(stderr, "recce: the agent at %s did not answer as an agent: %s\n", node,
			strerror(-rc));
	else
		status = follow(&c);
	if (status == 0 && c.write_failed)
		status = 1;
	if (c.fetching && c.fetched)
		fprintf(stderr, "recce: fetched %zu file%s (%llu bytes) from %s\n", c.fetched,
			c.fetched == 1 ? "" : "s", c.fetched_bytes, node);
	if (status == 0 && c.nkeep) {
		for (size_t i = 0; i < c.nkeep; i++)
			fprintf(
			    stderr,
			    "recce: the files of '%s' stay on %s: 'recce --node %s files' lists "
			    "them, 'recce --node %s fetch %s' brings them here\n",
			    c.keep[i], node, node, node, c.keep[i]);
	}
done:
	disconnect(&c);
	for (size_t i = 0; i < c.nouts; i++) {
		if (c.outs[i].state == OUT_OPEN) /* cut short: the partial file goes */
			outfile_abort(&c.outs[i].file);
		free(c.outs[i].name);
	}
	for (int i = 0; sent && i < argc; i++)
		if (sent[i] != argv[i])
			free(sent[i]);
	free(sent);
	free(c.outs);
	for (size_t i = 0; i < c.nkeep; i++)
		free(c.keep[i]);
	free(c.keep);
	return status;
}
