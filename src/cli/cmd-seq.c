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
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/events-messages.h"
#include "cli/follow.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "events/ring-read.h"
#include "events/seq-merge.h"
#include "events/seq-print.h"
#include "proc/self.h"
#include "profile/profile.h"
#include "util/outfile.h"
#include "util/signals.h"

struct seq_args {
	pid_t *pids;
	size_t npids;
	const char *output;
	const char *format;
	const char *duration;
	const char *profile;
	int mermaid, chrome, follow;
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
    OPT_FLAG_('f', "follow", struct seq_args, follow,
	      "keep reading until every process exits (or Ctrl-C)"),
    OPT_STRING_('d', "duration", "SECONDS", struct seq_args, duration,
		"keep reading for this long"),
    OPT_OUTPUT_('o', "output", "FILE", struct seq_args, output, "write there"),
    OPT_STRING_(0, "profile", "FILE", struct seq_args, profile,
		"each process's samples of each trace, from a record made meanwhile"),
    OPT_END_(),
};

struct sources {
	struct ring_reader *readers;
	struct seq_source *src;
	struct ring_event **events;
	size_t *nev, *cap;
	int *pidfds; /* of the processes read live, -1 for files */
	char (*what)[64];
	size_t n;
};

/* Opens source i: a pid, or a file when pid is 0. */
static void open_source(struct sources *s, size_t i, pid_t pid, const char *file)
{
	char path[4096];
	int err;

	s->pidfds[i] = -1;
	if (pid) {
		snprintf(s->what[i], sizeof(s->what[i]), "%d", (int)pid);
		err = ring_reader_open_pid(&s->readers[i], pid, path, sizeof(path));
		if (!err)
			s->pidfds[i] = proc_pidfd_open(pid);
	} else {
		snprintf(s->what[i], sizeof(s->what[i]), "%s", file);
		err = ring_reader_open_path(&s->readers[i], file);
	}
	if (err)
		events_die_open(err, pid ? s->what[i] : file, pid);
	s->src[i].r = &s->readers[i];
}

/* Reads what every source gained since the last time. */
static void drain_all(struct sources *s)
{
	for (size_t i = 0; i < s->n; i++) {
		int err = ring_reader_drain(&s->readers[i], &s->events[i], &s->nev[i], &s->cap[i]);
		if (err == -ENOMEM)
			die("out of memory reading '%s'", s->what[i]);
		if (err)
			warning("reading '%s' stopped: the file is damaged or was cut short",
				s->what[i]);
	}
}

struct print_job {
	enum seq_format f;
	const struct sources *s;
	const struct seq_result *res;
	const struct seq_costs *costs;
};

static int print_to(FILE *fp, const void *arg)
{
	const struct print_job *j = arg;
	seq_print(fp, j->f, j->s->src, j->s->n, j->res, j->costs);
	return ferror(fp) ? -EIO : 0;
}

static int by_trace_pid(const void *a, const void *b)
{
	const struct seq_cost *x = a, *y = b;

	if (x->id_hi != y->id_hi)
		return x->id_hi < y->id_hi ? -1 : 1;
	if (x->id_lo != y->id_lo)
		return x->id_lo < y->id_lo ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Parses 32 hex digits. */
static int trace_id_of(const char *s, uint64_t *hi, uint64_t *lo)
{
	char half[17];

	if (!s || strlen(s) != 32 || strspn(s, "0123456789abcdef") != 32)
		return -1;
	memcpy(half, s, 16);
	half[16] = '\0';
	*hi = strtoull(half, NULL, 16);
	*lo = strtoull(s + 16, NULL, 16);
	return 0;
}

/*
 * --profile: the profile's default value summed by trace id and process,
 * from the trace_id and pid labels recce record gives samples of a
 * librecce program. The profile stays alive: its type names are used.
 */
static struct seq_cost *costs_of(struct profile *p, struct seq_costs *c)
{
	struct seq_cost *v = calloc(p->nsamples ? p->nsamples : 1, sizeof(*v));
	size_t n = 0, t = p->default_sample_type;
	int si = profile_sample_type_index(p, "samples");

	if (!v)
		die("out of memory");
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *ps = &p->samples[i];
		const struct profile_label *id = profile_sample_label(ps, "trace_id");
		const struct profile_label *pid = profile_sample_label(ps, "pid");
		uint64_t hi, lo;
		if (!id || !pid || pid->str || trace_id_of(id->str, &hi, &lo) < 0)
			continue;
		v[n++] = (struct seq_cost){hi, lo, (int32_t)pid->num, ps->values[t],
					   si >= 0 ? (uint64_t)ps->values[si] : 1};
	}
	if (n)
		qsort(v, n, sizeof(*v), by_trace_pid);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && by_trace_pid(&v[k - 1], &v[i]) == 0) {
			v[k - 1].value += v[i].value;
			v[k - 1].samples += v[i].samples;
		} else {
			v[k++] = v[i];
		}
	}
	c->v = v;
	c->n = k;
	c->type = p->nsample_types ? p->sample_types[t].type : "samples";
	c->unit = p->nsample_types ? p->sample_types[t].unit : "count";
	if (!k)
		warning("'%s' has no samples labelled with a trace id: record the processes while "
			"they serve requests (recce record -p PID,PID), with a librecce that "
			"carries their tokens",
			c->profile);
	return v;
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
	double seconds = option_seconds("seq", "-d", a.duration, 0);
	if ((a.follow || a.duration) && !a.npids)
		usage_die("seq", "--follow and -d read running processes: give -p PID,PID");
	if (a.output && (errno = -outfile_check(a.output)) != 0)
		die("cannot write '%s': %s", a.output, strerror(errno));
	if (a.profile && f == SEQ_CHROME)
		usage_die("seq", "--profile shows under text and --mermaid, not --chrome");
	struct seq_costs costs = {0};
	struct profile *prof = NULL;
	struct seq_cost *cost_v = NULL;
	if (a.profile) {
		prof = profile_read_or_say(a.profile);
		if (!prof)
			return RECCE_EXIT_ERROR;
		costs.profile = a.profile;
		cost_v = costs_of(prof, &costs);
	}

	struct sources s = {0};
	s.n = a.npids + nfiles;
	s.readers = calloc(s.n, sizeof(*s.readers));
	s.src = calloc(s.n, sizeof(*s.src));
	s.events = calloc(s.n, sizeof(*s.events));
	s.nev = calloc(s.n, sizeof(*s.nev));
	s.cap = calloc(s.n, sizeof(*s.cap));
	s.pidfds = calloc(s.n, sizeof(*s.pidfds));
	s.what = calloc(s.n, sizeof(*s.what));
	if (!s.readers || !s.src || !s.events || !s.nev || !s.cap || !s.pidfds || !s.what)
		die("out of memory");
	for (size_t i = 0; i < a.npids; i++)
		open_source(&s, i, a.pids[i], NULL);
	for (size_t i = 0; i < nfiles; i++)
		open_source(&s, a.npids + i, 0, argv[first + (int)i]);

	/* Read once, or until Ctrl-C, the deadline or every process is gone. */
	sigset_t old;
	int sfd = block_stop_signals(&old);
	uint64_t deadline = follow_deadline(seconds);
	int more = 1;
	while (more) {
		more = (a.follow || a.duration) && follow_wait(sfd, s.pidfds, s.n, deadline);
		drain_all(&s);
	}
	unblock_stop_signals(sfd, &old);
	for (size_t i = 0; i < s.n; i++) {
		s.src[i].ev = s.events[i];
		s.src[i].n = s.nev[i];
		if (ring_reader_lost(&s.readers[i]))
			warning("'%s' lost %llu events to its rings' overwriting: messages may be "
				"missing",
				s.what[i], (unsigned long long)ring_reader_lost(&s.readers[i]));
	}

	struct seq_result res;
	if (seq_merge(s.src, s.n, &res) != 0)
		die("out of memory merging the sequences");
	int rc = 0;
	if (res.ntraces == 0) {
		error("no sequence events in what was read: the programs write them with "
		      "recce_seq_begin, recce_seq_inject and recce_seq_extract");
		rc = RECCE_EXIT_ERROR;
	} else {
		struct print_job job = {f, &s, &res, a.profile ? &costs : NULL};
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
		if (s.pidfds[i] >= 0)
			close(s.pidfds[i]);
	}
	free(s.readers);
	free(s.src);
	free(s.events);
	free(s.nev);
	free(s.cap);
	free(s.pidfds);
	free(s.what);
	free(a.pids);
	free(cost_v);
	profile_free(prof);
	return rc;
}
