/*
 * Running a command on an agent (see client.h): connect, hand over the
 * command and its -o names, then pass on what the agent sends, frame by
 * frame, to the caller's callbacks.
 */
#include "remote/client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/args.h"
#include "remote/frame.h"
#include "remote/tls.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/path.h"
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
	uint64_t bytes;	     /* written so far */
};

struct client {
	const struct remote_config *cfg;
	const struct remote_ui *ui;
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
	char tls_error[512]; /* why a TLS connection failed */
};

void remote_tell(const struct remote_ui *ui, enum remote_note what, const char *node,
		 const char *detail, int err)
{
	struct remote_note_info n = {what, node, detail, err, 0, 0};

	if (ui && ui->note)
		ui->note(ui->arg, &n);
}

static void note(const struct client *c, enum remote_note what, const char *detail, int err)
{
	remote_tell(c->ui, what, c->node, detail, err);
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
	char host[256], port[32], dir[4096];

	if (tcp_split(spec, 0, "", "7450", host, sizeof(host), port, sizeof(port)) < 0 || !*host)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s", c->cfg->tls_dir ? c->cfg->tls_dir : ".");
	int fd = tls_connect(dir, host, port, c->tls_error, sizeof(c->tls_error));
	if (fd < 0)
		return -ECONNREFUSED; /* tls_error says why */
	c->rfd = c->wfd = fd;
	return 0;
}

/* Finds the -o files of argv, and gives the node their base names. */
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

/* Frees what take_outputs() made; a file cut short goes. */
static void release_outputs(struct client *c, int argc, char **argv, char **sent)
{
	for (size_t i = 0; i < c->nouts; i++) {
		if (c->outs[i].state == OUT_OPEN)
			outfile_abort(&c->outs[i].file);
		free(c->outs[i].name);
	}
	for (int i = 0; sent && i < argc; i++)
		if (sent[i] != argv[i])
			free(sent[i]);
	free(sent);
	free(c->outs);
	for (size_t i = 0; i < c->nkeep; i++)
		free(c->keep[i]);
	free(c->keep);
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
		*o = (struct output){name, name, OUT_WAITING, {0}, 0};
	}
	if (!o || o->state == OUT_DONE || o->state == OUT_FAILED)
		return; /* unknown, done, or failed */
	int err = 0;
	if (o->state == OUT_WAITING) {
		if ((err = outfile_open(&o->file, o->local)) < 0) {
			note(c, REMOTE_CANNOT_WRITE, o->local, err);
			o->state = OUT_FAILED;
			c->write_failed = 1;
			return;
		}
		o->state = OUT_OPEN;
	}
	if (f->data.len && fwrite(f->data.data, 1, f->data.len, o->file.fp) != f->data.len)
		err = errno ? -errno : -EIO;
	c->fetched_bytes += f->data.len;
	o->bytes += f->data.len;
	if (!err && f->last)
		err = outfile_commit(&o->file);
	else if (err)
		outfile_abort(&o->file); /* whole or not at all */
	if (err) {
		note(c, REMOTE_CANNOT_WRITE, o->local, err);
		o->state = OUT_FAILED;
		c->write_failed = 1;
		return;
	}
	if (f->last) {
		o->state = OUT_DONE;
		c->fetched++;
		/* The node's messages name it by its name there. */
		if (!c->fetching && strcmp(o->local, o->name) != 0 && c->ui && c->ui->note) {
			struct remote_note_info n = {REMOTE_WROTE, c->node, o->local, 0, 1,
						     o->bytes};
			c->ui->note(c->ui->arg, &n);
		}
	}
}

/* The client's files on the node, to the caller. */
static void list_files(struct client *c, const Recce__Agent__FileList *l)
{
	struct remote_file *f = calloc(l->n_files ? l->n_files : 1, sizeof(*f));

	if (!f) {
		note(c, REMOTE_NO_MEMORY, NULL, -ENOMEM);
		return;
	}
	for (size_t i = 0; i < l->n_files; i++)
		f[i] = (struct remote_file){l->files[i]->name, l->files[i]->size,
					    l->files[i]->mtime_ns};
	if (c->ui && c->ui->files)
		c->ui->files(c->ui->arg, f, l->n_files);
	free(f);
}

static void output(struct client *c, int stream, const void *data, size_t len)
{
	if (c->ui && c->ui->output)
		c->ui->output(c->ui->arg, stream, data, len);
}

static int interrupted(const struct client *c)
{
	return c->ui && c->ui->interrupted && *c->ui->interrupted;
}

/* Reads the command's frames until its exit. */
static int follow(struct client *c)
{
	struct frame_conn conn;
	int status = -1, cancelled = 0;

	frame_conn_init(&conn, c->rfd);
	while (status < 0) {
		if (interrupted(c) && !cancelled) {
			Recce__Agent__Cancel k = RECCE__AGENT__CANCEL__INIT;
			frame_send_msg(c->wfd, 1, RECCE__AGENT__ENVELOPE__BODY_CANCEL, &k);
			cancelled = 1;
		}
		Envelope *e = NULL;
		int rc = frame_conn_wait(&conn, &e, 200);
		if (rc == -ETIMEDOUT || rc == -EINTR)
			continue;
		if (rc <= 0) {
			note(c, REMOTE_GONE, NULL, rc < 0 ? rc : 0);
			status = 1;
			break;
		}
		switch (e->body_case) {
		case RECCE__AGENT__ENVELOPE__BODY_PROGRESS:
			if (c->ui && c->ui->progress)
				c->ui->progress(c->ui->arg, c->node, e->progress->what,
						e->progress->done, e->progress->total,
						e->progress->unit);
			break;
		case RECCE__AGENT__ENVELOPE__BODY_OUTPUT:
			output(c, e->output->stream == 1 ? 1 : 2, e->output->data.data,
			       e->output->data.len);
			break;
		case RECCE__AGENT__ENVELOPE__BODY_FILE:
			output_write(c, e->file);
			break;
		case RECCE__AGENT__ENVELOPE__BODY_EXIT:
			status = e->exit->status;
			break;
		case RECCE__AGENT__ENVELOPE__BODY_FILE_LIST:
			list_files(c, e->file_list);
			status = 0;
			break;
		case RECCE__AGENT__ENVELOPE__BODY_ERROR:
			note(c, REMOTE_REFUSED, e->error->message, 0);
			status = 1;
			break;
		default:
			break; /* a message this client does not know */
		}
		frame_free(e);
	}
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
			note(c, REMOTE_REFUSED, e->error->message, 0);
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

int remote_node_valid(const char *node)
{
	return *node && (!strstr(node, "://") || strncmp(node, "ssh://", 6) == 0);
}

int remote_run(const struct remote_config *cfg, const struct remote_ui *ui, const char *node,
	       int argc, char **argv)
{
	struct client c = {.cfg = cfg, .ui = ui, .node = node, .rfd = -1, .wfd = -1};
	char **sent = NULL;
	int status = 1;

	int rc = take_outputs(&c, argc, argv, &sent);
	if (rc == -EEXIST) { /* remote_check_args() says so first */
		status = 2;
		goto done;
	}
	if (rc < 0) {
		note(&c, REMOTE_NO_MEMORY, NULL, rc);
		goto done;
	}
	rc = connect_node(&c, node);
	if (rc < 0) {
		note(&c, REMOTE_UNREACHABLE, c.tls_error[0] ? c.tls_error : NULL, rc);
		goto done;
	}
	rc = handshake(&c, sent, argc);
	char tls_why[256];
	if (rc < 0 && *tls_relay_error(tls_why, sizeof(tls_why)))
		note(&c, REMOTE_CERT_REFUSED, tls_why, rc);
	else if (rc < 0)
		note(&c, REMOTE_NOT_AGENT, NULL, rc);
	else
		status = follow(&c);
	if (status == 0 && c.write_failed)
		status = 1;
	if (c.fetching && c.fetched && ui && ui->note) {
		struct remote_note_info n = {REMOTE_FETCHED, node,	     NULL, 0,
					     c.fetched,	     c.fetched_bytes};
		ui->note(ui->arg, &n);
	}
	for (size_t i = 0; status == 0 && i < c.nkeep; i++)
		note(&c, REMOTE_KEPT, c.keep[i], 0);
done:
	disconnect(&c);
	release_outputs(&c, argc, argv, sent);
	return status;
}
