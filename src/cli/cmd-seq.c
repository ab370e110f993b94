/*
 * recce seq: one request's path across processes and machines, from the
 * sequence tokens librecce carried along with its messages: read from
 * running processes (-p) or from event files (saved with `recce events
 * -o`, or left by crashed processes), merged in causal order by serial,
 * printed as text, a Mermaid sequenceDiagram or a Chrome trace.
 * docs/recce-seq.md is its --help.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/events-messages.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "events/ring-read.h"
#include "events/seq-merge.h"
#include "events/seq-print.h"
#include "util/outfile.h"

struct seq_args {
	pid_t *pids;
	size_t npids;
	const char *output;
	const char *format;
	int mermaid, chrome;
};

static void pid_cb(void *ctx, const char *arg, const struct opt *o)
{
	struct seq_args *a = ctx;
	parse_pid_list("seq", "-p", arg, &a->pids, &a->npids);
}

static const struct opt seq_options[] = {
    OPT_CALL_('p', "pid", "PID[,PID...]", pid_cb, 0, "read these running processes"),
    OPT_FLAG_(0, "mermaid", struct seq_args, mermaid, "print a Mermaid sequenceDiagram"),
    OPT_FLAG_(0, "chrome", struct seq_args, chrome, "print a Chrome trace with flow arrows"),
    OPT_STRING_(0, "format", "FMT", struct seq_args, format, "text, mermaid or chrome"),
    OPT_STRING_('o', "output", "FILE", struct seq_args, output, "write there"),
    OPT_END_(),
};

struct sources {
	struct ring_reader *readers;
	struct seq_source *src;
	struct ring_event **events;
	size_t n;
};

/* Opens and drains source i: a pid, or a file when pid is 0. */
static void load(struct sources *s, size_t i, pid_t pid, const char *file)
{
	char what[64], path[4096];
	size_t n = 0, cap = 0;
	int err;

	if (pid) {
		snprintf(what, sizeof(what), "%d", (int)pid);
		err = ring_reader_open_pid(&s->readers[i], pid, path, sizeof(path));
	} else
		err = ring_reader_open_path(&s->readers[i], file);
	if (err)
		events_die_open(err, pid ? what : file, pid);
	err = ring_reader_drain(&s->readers[i], &s->events[i], &n, &cap);
	if (err == -ENOMEM)
		die("out of memory reading '%s'", pid ? what : file);
	if (err)
		warning("reading '%s' stopped: the file is damaged or was cut short",
			pid ? what : file);
	s->src[i].r = &s->readers[i];
	s->src[i].ev = s->events[i];
	s->src[i].n = n;
	if (ring_reader_lost(&s->readers[i]))
		warning("'%s' lost %llu events to its rings' overwriting: messages may be missing",
			pid ? what : file, (unsigned long long)ring_reader_lost(&s->readers[i]));
}

struct print_job {
	enum seq_format f;
	const struct sources *s;
	const struct seq_result *res;
};

static int print_to(FILE *fp, const void *arg)
{
	const struct print_job *j = arg;
	seq_print(fp, j->f, j->s->src, j->s->n, j->res);
	return ferror(fp) ? -EIO : 0;
}

int cmd_seq(int argc, char **argv)
{
	struct seq_args a = {0};
	int first = options_parse("seq", seq_options, 0, argc, argv, &a, NULL);
	enum seq_format f = a.mermaid ? SEQ_MERMAID : a.chrome ? SEQ_CHROME : SEQ_TEXT;

	if (first < argc && strcmp(argv[first], "merge") == 0)
		first++;
	if (a.mermaid + a.chrome + (a.format != NULL) > 1)
		usage_die("seq", "one format: --mermaid, --chrome or --format");
	if (a.format) {
		if (strcmp(a.format, "text") == 0)
			f = SEQ_TEXT;
		else if (strcmp(a.format, "mermaid") == 0)
			f = SEQ_MERMAID;
		else if (strcmp(a.format, "chrome") == 0)
			f = SEQ_CHROME;
		else
			usage_die("seq", "unknown format '%s': text, mermaid or chrome", a.format);
	}
	size_t nfiles = (size_t)(argc - first);
	if (!a.npids && !nfiles)
		usage_die("seq", "name the processes (-p PID,PID) or the event files to merge");
	if (a.output && (errno = -outfile_check(a.output)) != 0)
		die("cannot write '%s': %s", a.output, strerror(errno));

	struct sources s = {0};
	s.n = a.npids + nfiles;
	s.readers = calloc(s.n, sizeof(*s.readers));
	s.src = calloc(s.n, sizeof(*s.src));
	s.events = calloc(s.n, sizeof(*s.events));
	if (!s.readers || !s.src || !s.events)
		die("out of memory");
	for (size_t i = 0; i < a.npids; i++)
		load(&s, i, a.pids[i], NULL);
	for (size_t i = 0; i < nfiles; i++)
		load(&s, a.npids + i, 0, argv[first + (int)i]);

	struct seq_result res;
	if (seq_merge(s.src, s.n, &res) != 0)
		die("out of memory merging the sequences");
	int rc = 0;
	if (res.ntraces == 0) {
		error("no sequence events in what was read: the programs write them with "
		      "recce_seq_begin, recce_seq_inject and recce_seq_extract");
		rc = RECCE_EXIT_ERROR;
	} else {
		struct print_job job = {f, &s, &res};
		int err = outfile_write(a.output, print_to, &job);
		if (err) {
			error("cannot write '%s': %s", a.output ? a.output : "standard output",
			      strerror(-err));
			rc = RECCE_EXIT_ERROR;
		}
		size_t msgs = 0;
		for (size_t t = 0; t < res.ntraces; t++)
			msgs += res.traces[t].nmsgs;
		note("%zu message%s in %zu trace%s from %zu process%s", msgs, msgs == 1 ? "" : "s",
		     res.ntraces, res.ntraces == 1 ? "" : "s", s.n, s.n == 1 ? "" : "es");
	}
	seq_result_release(&res);
	for (size_t i = 0; i < s.n; i++) {
		ring_reader_release(&s.readers[i]);
		free(s.events[i]);
	}
	free(s.readers);
	free(s.src);
	free(s.events);
	free(a.pids);
	return rc;
}
