/*
 * One command on several nodes, merged by time (see multi.h): a child
 * per node runs remote_run() with its output on pipes; this process reads
 * their lines, puts each timed line on this machine's clock, and writes
 * the oldest line first once every node has one waiting or it has waited
 * LATENESS_NS.
 */
#include "remote/multi.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/client.h"
#include "util/array.h"
#include "util/clock.h"

#define MAX_NODES   64
#define LATENESS_NS 300000000LL /* how long a line waits for the other nodes */
#define LINE_MAX_B  65536	/* a longer line is cut there */
#define DAY_NS	    (86400LL * 1000000000)

struct line {
	int64_t t;	 /* ns of the day on this machine's clock, or -1: untimed */
	int64_t key;	 /* what it sorts by: t, or the node's last t before it */
	int64_t arrived; /* CLOCK_MONOTONIC when it was read */
	char *text;	 /* without its time when timed */
};

struct node {
	const char *name;
	int64_t offset; /* its clock minus ours */
	pid_t pid;
	int out, err; /* the child's pipes; -1 once closed */
	char *buf[2]; /* partial lines of out and err, LINE_MAX_B + 1 bytes each */
	size_t len[2];
	struct line *q; /* timed lines waiting, in the node's order */
	size_t head, n, cap;
	int64_t last_t; /* the time of its last timed line, for untimed ones */
};

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

static void emit(struct node *nd)
{
	struct line *l = &nd->q[nd->head++];

	if (l->t >= 0) {
		int64_t us = l->t / 1000;
		printf("%s %02d:%02d:%02d.%06d %s\n", nd->name, (int)(us / 3600000000LL),
		       (int)(us / 60000000 % 60), (int)(us / 1000000 % 60), (int)(us % 1000000),
		       l->text);
	} else {
		printf("%s %s\n", nd->name, l->text);
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
static void drain(struct node *nodes, size_t n, int flush)
{
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
		emit(best);
	}
	fflush(stdout);
}

/* Reads what a node wrote on stream s (0: out, 1: err); returns 0 at its
 * end. Complete lines of out are queued, of err written at once. */
static int read_stream(struct node *nd, int s)
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
			fprintf(stderr, "%s: %s\n", nd->name, b);
		else
			queue_line(nd, b, now);
		nd->len[s] = 0;
	}
	return *fd >= 0;
}

/* Whether argv has -o files that would come back from every node. */
static int has_outputs(int argc, char **argv)
{
	if (remote_keeps_outputs(argc, argv))
		return 0;
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix;
		const char *path = remote_output_arg(argc, argv, &i, &prefix);
		if (path && strcmp(path, "-") != 0)
			return 1;
	}
	return 0;
}

static int start_node(const struct remote_config *cfg, struct node *nd, int argc, char **argv)
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
		_exit(remote_run(cfg, nd->name, argc, argv));
	}
	close(out[1]);
	close(err[1]);
	nd->out = out[0];
	nd->err = err[0];
	return 0;
}

static void on_signal(int sig)
{
	(void)sig; /* the children cancel their commands; this one merges on */
}

int remote_run_many(const struct remote_config *cfg, const char *list, int argc, char **argv)
{
	struct node nodes[MAX_NODES];
	size_t n = 0;
	char *copy = strdup(list);
	int status = 0;

	if (!copy) {
		fprintf(stderr, "recce: out of memory\n");
		return 1;
	}
	if (has_outputs(argc, argv)) {
		fprintf(stderr, "recce: usage: with several nodes, -o files would come back "
				"from each to one path: run one node at a time, or keep them on "
				"the nodes with --wrap\n");
		free(copy);
		return 2;
	}
	for (char *save = NULL, *name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (n == MAX_NODES) {
			fprintf(stderr, "recce: usage: at most %d nodes at once\n", MAX_NODES);
			free(copy);
			return 2;
		}
		nodes[n++] = (struct node){.name = name, .out = -1, .err = -1, .pid = -1};
	}
	/* Every node's clock first, so that the first lines already line up. */
	char said[4096] = "";
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t rtt = 0;
		int rc = remote_clock(cfg, nodes[i].name, &nodes[i].offset, &rtt);
		if (rc == -ENOTSUP)
			fprintf(stderr,
				"recce: %s: its agent does not say its time: its lines are "
				"taken as on this clock\n",
				nodes[i].name);
		else if (rc < 0)
			continue; /* its run says why it cannot be reached */
		else if (at < sizeof(said))
			at += (size_t)snprintf(said + at, sizeof(said) - at,
					       "%s%s %+.3f ms (round trip %.3f ms)", at ? ", " : "",
					       nodes[i].name, (double)nodes[i].offset / 1e6,
					       (double)rtt / 1e6);
	}
	if (said[0])
		fprintf(stderr, "recce: clocks against this one's: %s\n", said);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int rc;
	for (size_t i = 0; i < n; i++)
		if ((rc = start_node(cfg, &nodes[i], argc, argv)) < 0) {
			fprintf(stderr, "recce: %s: cannot start its client: %s\n", nodes[i].name,
				strerror(-rc));
			status = 1;
		}
	for (;;) {
		struct pollfd p[2 * MAX_NODES];
		size_t np = 0, owner[2 * MAX_NODES];
		int stream[2 * MAX_NODES];
		for (size_t i = 0; i < n; i++)
			for (int s = 0; s < 2; s++) {
				int fd = s ? nodes[i].err : nodes[i].out;
				if (fd < 0)
					continue;
				p[np] = (struct pollfd){fd, POLLIN, 0};
				owner[np] = i;
				stream[np++] = s;
			}
		if (!np)
			break;
		if (poll(p, np, 100) < 0 && errno != EINTR)
			break;
		for (size_t k = 0; k < np; k++)
			if (p[k].revents)
				read_stream(&nodes[owner[k]], stream[k]);
		drain(nodes, n, 0);
	}
	drain(nodes, n, 1);
	for (size_t i = 0; i < n; i++) {
		int st = 0;
		if (nodes[i].pid > 0 && waitpid(nodes[i].pid, &st, 0) == nodes[i].pid) {
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (code > status)
				status = code;
		}
		free(nodes[i].buf[0]);
		free(nodes[i].buf[1]);
		free(nodes[i].q);
	}
	free(copy);
	return status;
}
