/*
 * Messages about librecce event files (events-messages.h).
 */
#include <errno.h>
#include <string.h>

#include "cli/events-messages.h"
#include "cli/usage.h"

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
