/*
 * One command on several nodes, merged by time (see multi.h): a child
 * per node runs remote_run() with its output on pipes; this process reads
 * their lines, puts each timed line on this machine's clock, and hands
 * the oldest line first to the caller once every node has one waiting or
 * it has waited LATENESS_NS.
 */
#include "remote/multi.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/args.h"
#include "remote/client.h"
#include "trace/trace-file.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"

#define LATENESS_NS 300000000LL /* how long a line waits for the other nodes */
#define LINE_MAX_B  65536	/* a longer line is cut there */

struct line {
	int64_t t;	 /* ns of the day on this machine's clock, or -1: untimed */
	int64_t key;	 /* what it sorts by: t, or the node's last t before it */
	int64_t arrived; /* CLOCK_MONOTONIC when it was read */
	char *text;	 /* without its time when timed */
};

struct node {
	const char *name;
	int64_t offset; /* its clock minus ours */
	int measured;	/* offset is known */
	pid_t pid;
	int out, err; /* the child's pipes; -1 once closed */
	char *buf[2]; /* partial lines of out and err, LINE_MAX_B + 1 bytes each */
	size_t len[2];
	struct line *q; /* timed lines waiting, in the node's order */
	size_t head, n, cap;
	int64_t last_t; /* the time of its last timed line, for untimed ones */
};

/* The run: the nodes, the caller's callbacks, the loop that reads them. */
struct multi {
	const struct remote_ui *ui;
	struct node *nodes;
	size_t n;
	struct evloop loop;
	size_t open; /* pipes not at their end */
};

/* A line to the caller's output, on stream (1 or 2). */
static void put_line(const struct multi *m, int stream, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put_line(const struct multi *m, int stream, const char *fmt, ...)
{
	char line[LINE_MAX_B + 512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (m->ui->output)
		m->ui->output(m->ui->arg, stream, line, (size_t)n);
}

/* "HH:MM:SS.ffffff " at the start of s: its ns of the day, or -1. */
static int64_t time_of_day(const char *s, size_t *skip)
{
	int h, m, sec, us, n = 0;

	if (sscanf(s, "%2d:%2d:%2d.%6d %n", &h, &m, &sec, &us, &n) != 4 || n < 16 || s[8] != '.')
		return -1;
	*skip = (size_t)n;
	return (((int64_t)h * 60 + m) * 60 + sec) * 1000000000 + (int64_t)us * 1000;
}

static int queue_line(struct node *nd, const char *s, int64_t now)
{
	size_t skip = 0;
	int64_t t = time_of_day(s, &skip);
	struct line *grown = array_reserve(nd->q, &nd->cap, nd->n + 1, sizeof(*grown));
	char *text = grown ? strdup(s + skip) : NULL;

	if (!text)
		return -ENOMEM;
	nd->q = grown;
	if (t >= 0) {
		t = ((t - nd->offset) % DAY_NS + DAY_NS) % DAY_NS;
		nd->last_t = t;
	}
	/* An untimed line keeps its place after the node's last timed one. */
	nd->q[nd->n++] = (struct line){t >= 0 ? t : -1, nd->last_t, now, text};
	return 0;
}

static void emit(const struct multi *m, struct node *nd)
{
	struct line *l = &nd->q[nd->head++];

	if (l->t >= 0) {
		int64_t us = l->t / 1000;
		put_line(m, 1, "%s %02d:%02d:%02d.%06d %s", nd->name, (int)(us / 3600000000LL),
			 (int)(us / 60000000 % 60), (int)(us / 1000000 % 60), (int)(us % 1000000),
			 l->text);
	} else {
		put_line(m, 1, "%s %s", nd->name, l->text);
	}
	free(l->text);
	if (nd->head == nd->n)
		nd->head = nd->n = 0;
}

/* The time a node's next line sorts by. */
static int64_t head_time(const struct node *nd)
{
	return nd->q[nd->head].key;
}

/* Writes what is ready: the oldest head while every node still reading
 * has a line waiting, or the oldest has waited long enough; all of it
 * when flush. */
static void drain(const struct multi *m, int flush)
{
	struct node *nodes = m->nodes;
	size_t n = m->n;

	for (;;) {
		struct node *best = NULL;
		int all = 1;
		int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
		for (size_t i = 0; i < n; i++) {
			struct node *nd = &nodes[i];
			if (nd->head == nd->n) {
				if (nd->out >= 0)
					all = 0;
				continue;
			}
			if (!best || head_time(nd) < head_time(best))
				best = nd;
		}
		if (!best || (!flush && !all && now - best->q[best->head].arrived < LATENESS_NS))
			break;
		emit(m, best);
	}
}

/* Reads what a node wrote on stream s (0: out, 1: err); returns 0 at its
 * end. Complete lines of out are queued, of err written at once. */
static int read_stream(const struct multi *m, struct node *nd, int s)
{
	int *fd = s ? &nd->err : &nd->out;
	char chunk[16384];
	ssize_t got = read(*fd, chunk, sizeof(chunk));

	if (got <= 0) {
		close(*fd);
		*fd = -1;
		got = 0;
	}
	int64_t now = (int64_t)time_now_ns(CLOCK_MONOTONIC);
	for (ssize_t i = 0; i <= got; i++) {
		int end = i == got;
		if (end && (got || !nd->len[s]))
			break;
		char c = end ? '\n' : chunk[i];
		if (c != '\n') {
			if (nd->len[s] < LINE_MAX_B)
				nd->buf[s][nd->len[s]++] = c;
			continue;
		}
		char *b = nd->buf[s];
		b[nd->len[s]] = '\0';
		if (s)
			put_line(m, 2, "%s: %s", nd->name, b);
		else
			queue_line(nd, b, now);
		nd->len[s] = 0;
	}
	return *fd >= 0;
}

static int start_node(const struct remote_config *cfg, const struct remote_ui *ui, struct node *nd,
		      int argc, char **argv)
{
	int out[2], err[2];

	nd->buf[0] = malloc(LINE_MAX_B + 1);
	nd->buf[1] = malloc(LINE_MAX_B + 1);
	if (!nd->buf[0] || !nd->buf[1])
		return -ENOMEM;
	if (pipe(out) < 0)
		return -errno;
	if (pipe(err) < 0) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	fflush(NULL);
	nd->pid = fork();
	if (nd->pid < 0)
		return -errno;
	if (nd->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		close(out[1]);
		close(err[1]);
		/* Its own -o files, where their paths say {node}. */
		char **v = remote_argv_for_node(nd->name, argc, argv);
		int rc = v ? remote_run(cfg, ui, nd->name, argc, v) : 1;
		if (v && nd->measured)
			remote_stamp_traces(nd->name, nd->offset, argc, v);
		_exit(rc);
	}
	close(out[1]);
	close(err[1]);
	nd->out = out[0];
	nd->err = err[0];
	return 0;
}

/* A node's pipe is readable: its lines are read, the timed ones queued. */
static void on_pipe(void *arg, int fd, short revents)
{
	struct multi *m = arg;

	(void)revents;
	for (size_t i = 0; i < m->n; i++)
		for (int s = 0; s < 2; s++)
			if ((s ? m->nodes[i].err : m->nodes[i].out) == fd &&
			    !read_stream(m, &m->nodes[i], s)) {
				evloop_remove(&m->loop, fd);
				if (!--m->open)
					evloop_stop(&m->loop, 0);
				return;
			}
}

/* After every wake, and every LATENESS_NS / 3: what is ready is written. */
static void on_wake(void *arg)
{
	drain(arg, 0);
}

/* Every node's clock against this one's, first, so that the first lines
 * already line up. */
static void measure_clocks(const struct remote_config *cfg, struct multi *m)
{
	char said[4096] = "";
	size_t at = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct node *nd = &m->nodes[i];
		int64_t rtt = 0;
		int rc = remote_clock(cfg, nd->name, &nd->offset, &rtt);
		nd->measured = rc >= 0;
		if (rc == -ENOTSUP)
			remote_tell(m->ui, REMOTE_NO_CLOCK, nd->name, NULL, 0);
		else if (rc < 0)
			continue; /* its run says why it cannot be reached */
		else if (at < sizeof(said))
			at += (size_t)snprintf(
			    said + at, sizeof(said) - at, "%s%s %+.3f ms (round trip %.3f ms)",
			    at ? ", " : "", nd->name, (double)nd->offset / 1e6, (double)rtt / 1e6);
	}
	if (said[0])
		remote_tell(m->ui, REMOTE_CLOCKS, NULL, said, 0);
}

void remote_stamp_traces(const char *node, int64_t offset_ns, int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix, *path = remote_output_arg(argc, argv, &i, &prefix);
		/* Not a trace file (a profile, a --wrap set left there): left alone. */
		if (path && strcmp(path, "-") != 0)
			(void)trace_file_stamp(path, node, offset_ns);
	}
}

int remote_run_many(const struct remote_config *cfg, const struct remote_ui *ui,
		    const char *const *names, size_t n, int argc, char **argv)
{
	struct node nodes[REMOTE_MAX_NODES];
	struct multi m = {.ui = ui, .nodes = nodes, .n = n};
	int status = 0;

	if (n > REMOTE_MAX_NODES)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		nodes[i] = (struct node){.name = names[i], .out = -1, .err = -1, .pid = -1};
	measure_clocks(cfg, &m);
	evloop_init(&m.loop);
	int rc = evloop_check_add(&m.loop, on_wake, &m);
	if (!rc) {
		int id = evloop_timer_add(&m.loop, 0, LATENESS_NS / 3, NULL, &m);
		rc = id < 0 ? id : 0;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = start_node(cfg, ui, &nodes[i], argc, argv)) < 0) {
			remote_tell(ui, REMOTE_CANNOT_START, nodes[i].name, NULL, rc);
			status = 1;
			rc = 0;
			continue;
		}
		rc = evloop_add(&m.loop, nodes[i].out, 0, on_pipe, &m);
		if (!rc)
			rc = evloop_add(&m.loop, nodes[i].err, 0, on_pipe, &m);
		m.open += 2;
	}
	if (!rc && m.open)
		rc = evloop_run(&m.loop);
	evloop_release(&m.loop);
	drain(&m, 1);
	if (rc < 0) {
		remote_tell(ui, rc == -ENOMEM ? REMOTE_NO_MEMORY : REMOTE_WAIT_FAILED, NULL, NULL,
			    rc);
		status = 1;
	}
	for (size_t i = 0; i < n; i++) {
		int st = 0;
		if (nodes[i].out >= 0)
			close(nodes[i].out);
		if (nodes[i].err >= 0)
			close(nodes[i].err);
		if (nodes[i].pid > 0 && waitpid(nodes[i].pid, &st, 0) == nodes[i].pid) {
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (code > status)
				status = code;
		}
		free(nodes[i].buf[0]);
		free(nodes[i].buf[1]);
		for (size_t k = nodes[i].head; k < nodes[i].n; k++)
			free(nodes[i].q[k].text);
		free(nodes[i].q);
	}
	return status;
}
