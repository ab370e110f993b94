/*
 * Messages about librecce event files (events-messages.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/events-messages.h"
#include "cli/usage.h"
#include "util/term-safe.h"

void events_die_open(int err, const char *what, pid_t pid)
{
	if (err == -ESRCH)
		die("no process with pid %d: check the pid, or read what it left with --postmortem "
		    "%d",
		    (int)pid, (int)pid);
	if (err == -ETIMEDOUT)
		die("process %d wrote no librecce event while recce waited: run it where it "
		    "writes events, then read again",
		    (int)pid);
	if (err == -ENOENT && pid)
		die("process %d has no librecce event file: it does not use librecce, or has "
		    "written "
		    "no event yet",
		    (int)pid);
	if (err == -ENOENT)
		die("no event file '%s': a process that exits cleanly removes its file "
		    "(set RECCE_KEEP=1 in its environment to keep it)",
		    what);
	if (err == -EACCES || err == -EPERM)
		die("cannot read '%s': run recce as the process's user or as root", what);
	if (err == -EPROTONOSUPPORT)
		die("'%s' was written by a newer librecce: update recce to read it", what);
	if (err == -EBADMSG)
		die("'%s' is not a librecce event file, or it is damaged", what);
	die("cannot read '%s': %s", what, strerror(-err));
}

const char *events_shown_name(const char *name, char *buf, size_t len)
{
	char raw[17];

	snprintf(raw, sizeof(raw), "%.16s", name);
	return term_safe(raw, buf, len);
}

/* Where the events of the programs a process ran before and after this
 * file's are: an exec starts a new file under the same name, and the
 * earlier one is set aside (its name in the new one's header). */
void events_say_exec(const struct ring_reader *r, const char *path)
{
	char comm[80], before[sizeof(r->hdr.before_exec) * 4 + 1];
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 1;

	if (r->hdr.state == RECCE_PROC_EXECED)
		note("pid %d (%s) ran another program (exec) after these events: that program's "
		     "are in %.*s/recce-%d.events (recce events -p %d while it runs)",
		     (int)r->hdr.pid, events_shown_name(r->hdr.comm, comm, sizeof(comm)), dir,
		     slash ? path : ".", (int)r->hdr.pid, (int)r->hdr.pid);
	if (r->hdr.before_exec[0]) {
		char raw[sizeof(r->hdr.before_exec) + 1];
		snprintf(raw, sizeof(raw), "%.*s", (int)sizeof(r->hdr.before_exec),
			 r->hdr.before_exec);
		note("pid %d ran another program before this one (exec): its events are in "
		     "%.*s/%s (recce events --postmortem FILE)",
		     (int)r->hdr.pid, dir, slash ? path : ".",
		     term_safe(raw, before, sizeof(before)));
	}
}

void events_summary(const struct ring_reader *r, size_t shown)
{
	char name[80];

	note("%zu event%s from %zu thread%s of pid %d (%s)", shown, shown == 1 ? "" : "s",
	     r->nthreads, r->nthreads == 1 ? "" : "s", (int)r->hdr.pid,
	     events_shown_name(r->hdr.comm, name, sizeof(name)));
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].lost)
			warning("thread %d (%s): %llu events lost, overwritten before they were "
				"read: read more often (--follow) or give it a larger ring "
				"(RECCE_RING_EVENTS in its environment)",
				(int)r->threads[i].tid,
				events_shown_name(r->threads[i].name, name, sizeof(name)),
				(unsigned long long)r->threads[i].lost);
	if (r->hdr.dropped_reused)
		warning("%llu events of threads that had ended are gone from the file: new threads "
			"took their rings over, none being free; raise RECCE_THREADS in its "
			"environment to keep them",
			(unsigned long long)r->hdr.dropped_reused);
	if (r->hdr.dropped_no_slot)
		warning("%llu events dropped by threads that found no free ring: raise "
			"RECCE_THREADS in its environment",
			(unsigned long long)r->hdr.dropped_no_slot);
	if (r->hdr.dropped_no_name)
		warning("%llu events dropped: the file had no room for more names",
			(unsigned long long)r->hdr.dropped_no_name);
	if (r->bad_records)
		warning("%llu records were malformed and skipped",
			(unsigned long long)r->bad_records);
}
