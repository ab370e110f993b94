/*
 * `recce --node NODE[,NODE...] COMMAND ...` (see node.h): the words of the
 * remote client. remote/client.c and remote/multi.c run the command and
 * report through callbacks; this file checks the arguments, catches
 * Ctrl-C, and writes what they report: the command's output as it comes,
 * its progress redrawn on a terminal, the node's files as `ls -l` lists
 * them, and every message.
 */
#include "cli/node.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/dirs.h"
#include "cli/node-record.h"
#include "cli/usage.h"
#include "remote/args.h"
#include "remote/client.h"
#include "remote/multi.h"
#include "trace/trace-file.h"
#include "util/readall.h"

/* How progress is shown, decided at its first report (in a node's child
 * of a run on several nodes, after its standard error became a pipe):
 * 1 on a line redrawn (a terminal), 2 as lines, 0 not. */
struct node_ui {
	int progress;	 /* -2 until decided */
	int progress_up; /* a redrawn line is on the terminal now */
};

static volatile sig_atomic_t interrupted;

/* The first Ctrl-C cancels the command on the node, which still writes
 * its files; a second one leaves at once. */
static void on_interrupt(int sig)
{
	(void)sig;
	if (interrupted++) {
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
}

/* RECCE_PROGRESS: unset, as the terminal says (redrawn on one, none
 * otherwise); 0 never; else redrawn on a terminal and as lines otherwise. */
static int progress_mode(void)
{
	const char *env = getenv("RECCE_PROGRESS");
	int want = !env || !*env ? -1 : strcmp(env, "0") != 0;

	if (want == 0)
		return 0;
	return isatty(STDERR_FILENO) ? 1 : want > 0 ? 2 : 0;
}

/* Takes a redrawn progress line off the terminal, before other output. */
static void progress_clear(struct node_ui *u)
{
	if (u->progress_up)
		write_all(STDERR_FILENO, "\r\033[K", 4);
	u->progress_up = 0;
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

/* "recce: NODE: recording: 3 s of 10 s (30%)". */
static void on_progress(void *arg, const char *node, const char *what, uint64_t done,
			uint64_t total, const char *unit)
{
	struct node_ui *u = arg;
	char line[600], d[64], t[64] = "";

	if (u->progress == -2)
		u->progress = progress_mode();
	if (!u->progress)
		return;
	unit = unit && *unit ? unit : "";
	amount(d, sizeof(d), done, unit);
	if (total)
		amount(t, sizeof(t), total, unit);
	int n = snprintf(line, sizeof(line), "%srecce: %s: %.200s: %s%s%s",
			 u->progress == 1 ? "\r\033[K" : "", node, what ? what : "", d,
			 total ? " of " : "", t);
	if (total && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, " (%.0f%%)",
			      100.0 * (double)done / (double)total);
	if (n > 0 && (size_t)n < sizeof(line) - 1) {
		if (u->progress == 2)
			line[n++] = '\n';
		write_all(STDERR_FILENO, line, (size_t)n);
		u->progress_up = u->progress == 1;
	}
}

static void on_output(void *arg, int stream, const void *data, size_t len)
{
	progress_clear(arg);
	/* A closed terminal loses it, as locally. */
	write_all(stream == 1 ? STDOUT_FILENO : STDERR_FILENO, data, len);
}

/* The client's files on the node, as `ls -l` would list them. */
static void on_files(void *arg, const struct remote_file *f, size_t n)
{
	progress_clear(arg);
	if (!n) {
		printf("no files are kept on this node\n");
		fflush(stdout);
		return;
	}
	printf("%-32s %12s  %s\n", "name", "bytes", "written");
	for (size_t i = 0; i < n; i++) {
		char when[32];
		time_t t = (time_t)(f[i].mtime_ns / 1000000000);
		struct tm tm;
		if (!localtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "@%lld", (long long)t);
		printf("%-32s %12llu  %s\n", f[i].name, (unsigned long long)f[i].size, when);
	}
	fflush(stdout);
}

static void on_note(void *arg, const struct remote_note_info *n)
{
	const char *node = n->node ? n->node : "";
	const char *why = n->detail ? n->detail : strerror(-n->err);

	progress_clear(arg);
	switch (n->what) {
	case REMOTE_UNREACHABLE:
		fprintf(stderr, "recce: cannot reach the agent at %s: %s\n", node, why);
		break;
	case REMOTE_CERT_REFUSED:
		fprintf(stderr,
			"recce: the agent at %s refused this client's certificate (%s): a "
			"certificate that was revoked, has expired, or is of another CA is "
			"refused; ask for a new one (recce certs client NAME)\n",
			node, n->detail);
		break;
	case REMOTE_NOT_AGENT:
		fprintf(stderr, "recce: the agent at %s did not answer as an agent: %s\n", node,
			strerror(-n->err));
		break;
	case REMOTE_REFUSED:
		fprintf(stderr, "recce: the agent at %s refused: %s\n", node, n->detail);
		break;
	case REMOTE_GONE:
		fprintf(stderr, "recce: the agent at %s went away before the command ended%s%s\n",
			node, n->err ? ": " : "", n->err ? strerror(-n->err) : "");
		break;
	case REMOTE_CANNOT_WRITE:
		fprintf(stderr, "recce: cannot write '%s': %s\n", n->detail, strerror(-n->err));
		break;
	case REMOTE_FETCHED:
		fprintf(stderr, "recce: fetched %llu file%s (%llu bytes) from %s\n",
			(unsigned long long)n->count, n->count == 1 ? "" : "s",
			(unsigned long long)n->bytes, node);
		break;
	case REMOTE_KEPT:
		fprintf(stderr,
			"recce: the files of '%s' stay on %s: 'recce --node %s files' lists "
			"them, 'recce --node %s fetch %s' brings them here\n",
			n->detail, node, node, node, n->detail);
		break;
	case REMOTE_NO_MEMORY:
		fprintf(stderr, "recce: out of memory\n");
		break;
	case REMOTE_NO_CLOCK:
		fprintf(stderr,
			"recce: %s: its agent does not say its time: its lines are taken as on "
			"this clock\n",
			node);
		break;
	case REMOTE_CLOCKS:
		fprintf(stderr, "recce: clocks against this one's: %s\n", n->detail);
		break;
	case REMOTE_CANNOT_START:
		fprintf(stderr, "recce: %s: cannot start its client: %s\n", node,
			strerror(-n->err));
		break;
	case REMOTE_WROTE: {
		/* Among several nodes, the line comes prefixed with its node. */
		char size[64];
		amount(size, sizeof(size), n->bytes, "bytes");
		fprintf(stderr, "recce: wrote %s (%s)\n", n->detail, size);
		break;
	}
	case REMOTE_WAIT_FAILED:
		fprintf(stderr, "recce: cannot wait for the nodes' output: %s\n",
			strerror(-n->err));
		break;
	}
}

/* Why argv cannot run on node, said; 0 when it can. */
static int check(const char *node, int argc, char **argv)
{
	if (!remote_node_valid(node)) {
		fprintf(stderr, "recce: usage: --node takes HOST[:PORT] (TLS), unix:PATH (a local "
				"agent's socket) or ssh://[USER@]HOST[:PORT]\n");
		return RECCE_EXIT_USAGE;
	}
	switch (remote_check_args(argc, argv)) {
	case REMOTE_ARGS_FILES:
		fprintf(stderr, "recce: usage: recce --node NODE files | recce --node NODE fetch "
				"NAME... [--remove]\n");
		return RECCE_EXIT_USAGE;
	case REMOTE_ARGS_SAME_NAME:
		fprintf(stderr, "recce: usage: two -o files with the same name cannot come back "
				"from one node\n");
		return RECCE_EXIT_USAGE;
	default:
		return 0;
	}
}

/* Whether two of the nodes would send an -o file back to one path: their
 * names, made file names, are one (said). */
static int clashing_labels(const char *const *names, size_t n, int argc, char **argv)
{
	char a[256], b[256];

	if (remote_keeps_outputs(argc, argv))
		return 0;
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix, *path = remote_output_arg(argc, argv, &i, &prefix);
		if (!path || !strstr(path, REMOTE_NODE_MARK))
			continue;
		for (size_t x = 0; x < n; x++)
			for (size_t y = 0; y < x; y++) {
				remote_node_label(names[x], a, sizeof(a));
				remote_node_label(names[y], b, sizeof(b));
				if (strcmp(a, b) == 0) {
					fprintf(stderr,
						"recce: usage: nodes %s and %s both put '%s' for "
						"{node} in -o %s: name them apart\n",
						names[y], names[x], a, path);
					return 1;
				}
			}
		return 0;
	}
	return 0;
}

/* Several nodes: NODE,NODE... split, each checked. */
static int run_many(const struct remote_ui *ui, const char *list, int argc, char **argv)
{
	const char *names[REMOTE_MAX_NODES];
	size_t n = 0;
	char *copy = strdup(list);
	int status = RECCE_EXIT_USAGE;
	struct node_record rec;

	if (!copy) {
		fprintf(stderr, "recce: out of memory\n");
		return RECCE_EXIT_ERROR;
	}
	if ((status = node_record_prepare(&rec, 1, argc, argv)) != 0)
		goto out;
	status = RECCE_EXIT_USAGE;
	const char *one = remote_outputs_collide(rec.argc, rec.argv);
	if (one) {
		char *each = node_record_each(one);
		fprintf(stderr,
			"recce: usage: with several nodes, -o %s would come back from each to one "
			"path: put {node} in it (-o %s), or keep the files on the nodes with "
			"--wrap\n",
			one, each ? each : "NAME.{node}");
		free(each);
		goto out;
	}
	for (char *save = NULL, *name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (n == REMOTE_MAX_NODES) {
			fprintf(stderr, "recce: usage: at most %d nodes at once\n",
				REMOTE_MAX_NODES);
			goto out;
		}
		if (check(name, rec.argc, rec.argv))
			goto out;
		names[n++] = name;
	}
	if (clashing_labels(names, n, rec.argc, rec.argv))
		goto out;
	fflush(NULL); /* before the nodes' children are forked */
	status = remote_run_many(dirs_remote(), ui, names, n, rec.argc, rec.argv);
	status = node_record_finish(&rec, names, n, status);
out:
	node_record_release(&rec);
	free(copy);
	return status;
}

/* Whether argv names an -o file (before "--"; "-" aside). */
static int has_output(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *prefix, *path = remote_output_arg(argc, argv, &i, &prefix);
		if (path && strcmp(path, "-") != 0)
			return 1;
	}
	return 0;
}

/* fetch NAME...: the files of each set fetched here (NAME.0, NAME.1,
 * ...), stamped as a trace's -o files are. */
static void stamp_fetched(const char *node, int64_t offset, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		for (unsigned k = 0; k < 100000; k++) {
			char path[4096];
			if (snprintf(path, sizeof(path), "%s.%u", argv[i], k) >= (int)sizeof(path) ||
			    access(path, F_OK) != 0)
				break;
			(void)trace_file_stamp(path, node, offset);
		}
	}
}

/* One node: its -o files as it would have them among several. */
static int run_one(const struct remote_ui *ui, const char *node, int argc, char **argv)
{
	struct node_record rec;
	int status = node_record_prepare(&rec, 0, argc, argv);

	if (!status)
		status = check(node, rec.argc, rec.argv);
	char **v = status ? NULL : remote_argv_for_node(node, rec.argc, rec.argv);
	if (!status && !v) {
		fprintf(stderr, "recce: out of memory\n");
		status = RECCE_EXIT_ERROR;
	}
	/* A trace's files brought here carry the node's clock, for replay
	 * with other hosts' files. */
	int64_t offset = 0, rtt;
	int fetch = rec.argc > 0 && strcmp(rec.argv[0], "fetch") == 0;
	int measured = !status && rec.argc > 0 &&
		       ((strcmp(rec.argv[0], "trace") == 0 && has_output(rec.argc, rec.argv)) ||
			fetch) &&
		       remote_clock(dirs_remote(), node, &offset, &rtt) >= 0;
	if (!status) {
		status = remote_run(dirs_remote(), ui, node, rec.argc, v);
		if (measured && fetch && status == 0)
			stamp_fetched(node, offset, rec.argc, rec.argv);
		else if (measured)
			remote_stamp_traces(node, offset, rec.argc, v);
		status = node_record_finish(&rec, &node, 1, status);
	}
	remote_argv_free(rec.argc, v, rec.argv);
	node_record_release(&rec);
	return status;
}

int node_run(const char *node, int argc, char **argv)
{
	struct node_ui u = {-2, 0};
	struct remote_ui ui = {on_output, on_progress, on_files, on_note, &u, &interrupted};
	struct sigaction sa;

	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (strchr(node, ','))
		return run_many(&ui, node, argc, argv);
	int status = run_one(&ui, node, argc, argv);
	progress_clear(&u);
	return status;
}
