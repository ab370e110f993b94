/*
 * recce events: what a program that uses librecce wrote into its rings,
 * read from outside: live (-p PID, once or --follow / -d), after it
 * crashed (--postmortem PID), or from a saved file; printed as text,
 * JSON lines or a Chrome trace, or saved as an event file.
 * docs/recce-events.md is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/events-messages.h"
#include "cli/follow.h"
#include "cli/options.h"
#include "remote/scopes.h"
#include "cli/usage.h"
#include "events/event-print.h"
#include "events/ring-files.h"
#include "events/ring-read.h"
#include "events/ring-write.h"
#include "proc/self.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/signals.h"

struct events_args {
	pid_t *pids;
	size_t npids;
	const char *postmortem;
	const char *output;
	const char *format;
	const char *duration;
	const char *last;
	int follow;
	int clean;
};

static void pid_cb(void *ctx, const char *arg, const struct opt *o)
{
	struct events_args *a = ctx;
	parse_pid_list("events", "-p", arg, &a->pids, &a->npids);
}

static const struct opt events_options[] = {
    OPT_CALL_('p', "pid", "PID", pid_cb, 0, "read the events of this running process"),
    OPT_STRING_(0, "postmortem", "PID|FILE", struct events_args, postmortem,
		"read the file a crashed process left: each thread's last events"),
    OPT_FLAG_('f', "follow", struct events_args, follow, "keep reading until the process exits"),
    OPT_STRING_('d', "duration", "SECONDS", struct events_args, duration,
		"keep reading for this long"),
    OPT_OUTPUT_('o', "output", "FILE", struct events_args, output,
		"write there (FILE.events: an event file, .json: JSON lines)"),
    OPT_STRING_(0, "format", "FMT", struct events_args, format, "text, json, chrome or events"),
    OPT_STRING_(0, "last", "N", struct events_args, last,
		"only each thread's last N events (--postmortem: 20; 0: all)"),
    OPT_FLAG_NEEDS_(0, "clean", struct events_args, clean, SCOPE_ADMIN,
		    "remove the files of processes that no longer run"),
    OPT_END_(),
};

static const char *events_dir(void)
{
	const char *d = getenv("RECCE_EVENTS_DIR");
	return d && *d ? d : "/dev/shm";
}

static int parse_format(const char *s, enum event_format *f)
{
	static const char *const names[] = {"text", "json", "chrome"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*f = (enum event_format)i;
			return 0;
		}
	return strcmp(s, "events") == 0 ? 1 : -1;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Keeps each thread's last n events of e[0..*count). */
static void keep_last(struct ring_event *e, size_t *count, size_t nthreads, long long n)
{
	size_t *seen = calloc(nthreads + 1, sizeof(*seen)), k = 0;
	if (!seen)
		return;
	for (size_t i = 0; i < *count; i++)
		seen[e[i].thread]++;
	for (size_t i = 0; i < *count; i++)
		if (seen[e[i].thread]-- <= (size_t)n)
			e[k++] = e[i];
	*count = k;
	free(seen);
}

/*
 * The followed process ran another program (exec) that uses librecce too:
 * opens the new one's file, waiting for it until the deadline (0: none),
 * then sums up the old one's events and reads on from the new one. 0, or
 * -1 with the old one still open when there is no new file to read.
 */
static int next_program(struct ring_reader *r, struct event_printer *pr, pid_t pid, char *path,
			size_t len, size_t shown, uint64_t deadline)
{
	struct ring_reader next;
	char next_path[4096], comm[80];
	double left = 0;

	if (deadline) {
		uint64_t now = time_now_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			return -1;
		left = (double)(deadline - now) / 1e9;
	}
	if (follow_open_events(&next, pid, next_path, sizeof(next_path), left) != 0)
		return -1;
	events_summary(r, shown);
	note("pid %d (%s) ran another program (exec): following it", (int)pid,
	     events_shown_name(r->hdr.comm, comm, sizeof(comm)));
	event_printer_end_program(pr);
	ring_reader_release(r);
	*r = next;
	snprintf(path, len, "%s", next_path);
	return 0;
}

int cmd_events(int argc, char **argv)
{
	struct events_args a = {0};
	int first = options_parse("events", events_options, 0, argc, argv, &a, NULL);
	enum event_format fmt = EVENTS_TEXT;
	int save = 0;
	long long last = 0;

	if (a.clean) {
		int n = ring_files_clean(events_dir());
		if (n < 0)
			die("cannot clean '%s': %s", events_dir(), strerror(-n));
		note("removed %d event files of processes that no longer run", n);
		return 0;
	}
	int sources = (a.npids > 0) + (a.postmortem != NULL) + (first < argc);
	if (sources != 1)
		usage_die("events", "name one source: -p PID, --postmortem PID or an event file");
	if (a.npids > 1)
		usage_die("events", "one process at a time");
	if (first + 1 < argc)
		usage_die("events", "one event file at a time, not also '%s'", argv[first + 1]);
	if (a.format && (save = parse_format(a.format, &fmt)) < 0)
		usage_die("events", "unknown format '%s': text, json, chrome or events", a.format);
	if (!a.format && a.output)
		save = ends_with(a.output, ".events"),
		fmt = ends_with(a.output, ".json") ? EVENTS_JSON : EVENTS_TEXT;
	if (save && !a.output)
		usage_die("events", "an event file is binary: name it with -o FILE.events");
	double seconds = option_seconds("events", "-d", a.duration, 0);
	if ((a.follow || a.duration) && !a.npids)
		usage_die("events", "--follow and -d read a running process: give -p PID");
	if (a.last && parse_int(a.last, 0, 1LL << 40, &last) != 0)
		usage_die("events", "--last wants a number of events (0: all), not '%s'", a.last);
	if (a.last && last == 0)
		last = -1; /* every event the file holds */
	if (a.output && (errno = -outfile_check(a.output)) != 0)
		die("cannot write '%s': %s", a.output, strerror(errno));

	struct ring_reader r;
	char path[4096];
	int err;
	pid_t pid = a.npids ? a.pids[0] : 0;
	if (pid) {
		err = follow_open_events(&r, pid, path, sizeof(path), seconds);
		if (err)
			events_die_open(err, path, pid);
	} else {
		const char *what = a.postmortem ? a.postmortem : argv[first];
		if (a.postmortem && strspn(what, "0123456789") == strlen(what))
			snprintf(path, sizeof(path), "%s/recce-%s.events", events_dir(), what);
		else
			snprintf(path, sizeof(path), "%s", what);
		err = ring_reader_open_path(&r, path);
		if (err)
			events_die_open(err, path, 0);
		if (a.postmortem && !last)
			last = 20;
	}

	/* Streamed unless the whole run is needed at the end. */
	int keep_all = save || last > 0;
	struct outfile of = {0};
	FILE *out = stdout;
	if (a.output) {
		if ((err = outfile_open(&of, a.output)) != 0)
			die("cannot write '%s': %s", a.output, strerror(-err));
		out = of.fp;
	}
	struct event_printer pr;
	event_printer_init(&pr, out, fmt, &r);
	if (!save)
		event_printer_begin(&pr);

	sigset_t old;
	int sfd = block_stop_signals(&old);
	int pidfd = pid ? proc_pidfd_open(pid) : -1;
	uint64_t deadline = follow_deadline(seconds);
	struct ring_event *ev = NULL;
	size_t n = 0, cap = 0, shown = 0, programs = 1;
	int more = 1;
	while (more) {
		more = (a.follow || a.duration) && follow_wait(sfd, &pidfd, 1, deadline);
		if (!keep_all)
			n = 0;
		err = ring_reader_drain(&r, &ev, &n, &cap);
		if (err) {
			error("reading '%s' stopped: %s", path,
			      err == -ENOMEM ? "out of memory"
					     : "the file is damaged or was cut short");
			break;
		}
		if (!keep_all) {
			event_printer_put(&pr, ev, n);
			shown += n;
			fflush(out);
		} else
			shown = n;
		if (r.hdr.state == RECCE_PROC_EXECED && pid && more && !keep_all) {
			/* Streamed: go on with the program it runs now. */
			if (next_program(&r, &pr, pid, path, sizeof(path), shown, deadline) != 0)
				break;
			shown = 0;
			programs++;
			continue;
		}
		if ((r.hdr.state == RECCE_PROC_EXITED || r.hdr.state == RECCE_PROC_EXECED) && pid)
			more = 0;
	}
	unblock_stop_signals(sfd, &old);
	if (pidfd >= 0)
		close(pidfd);
	size_t held = n;
	if (last > 0)
		keep_last(ev, &n, r.nthreads, last), shown = n;
	if (keep_all && !save)
		event_printer_put(&pr, ev, n);
	/* A read that stopped early still writes what it got, and exits 1. */
	int failed = err != 0;
	if (save && (err = ring_save(out, &r, ev, n)) != 0) {
		error("cannot save the events: %s", strerror(-err));
		failed = 1;
	}
	if (!save)
		event_printer_end(&pr);
	if (a.output && (err = outfile_commit(&of)) != 0) {
		error("cannot write '%s': %s", a.output, strerror(-err));
		failed = 1;
	} else if (out == stdout && fflush(stdout) != 0)
		failed = 1;
	char comm[80];
	if (a.postmortem && r.hdr.state != RECCE_PROC_EXECED)
		note("pid %d (%s) %s", (int)r.hdr.pid,
		     events_shown_name(r.hdr.comm, comm, sizeof(comm)),
		     r.hdr.state == RECCE_PROC_EXITED
			 ? "exited cleanly"
			 : "did not exit cleanly (it crashed, was killed, or still runs)");
	if (programs == 1)
		events_say_exec(&r, path);
	events_summary(&r, shown);
	if (keep_all && shown < held)
		note("%zu more event%s in the file: --last N shows each thread's last N, --last 0 "
		     "all of them",
		     held - shown, held - shown == 1 ? " is" : "s are");
	event_printer_release(&pr);
	ring_reader_release(&r);
	free(ev);
	free(a.pids);
	return failed ? RECCE_EXIT_ERROR : 0;
}
