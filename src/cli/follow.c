/*
 * Following event files until there is no reason to (follow.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/follow.h"
#include "cli/usage.h"
#include "events/ring-read.h"
#include "proc/self.h"
#include "symbols/elf-defines.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/signals.h"

int follow_wait(int sfd, const int *pidfds, size_t n, uint64_t deadline)
{
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	if (deadline && now >= deadline)
		return 0;
	uint64_t until = now + 100000000ULL;
	if (deadline && deadline < until)
		until = deadline;
	if (evloop_wait_fd(sfd, POLLIN, (int64_t)until) > 0)
		return 0;
	size_t watched = 0, gone = 0;
	unsigned char ready[n ? n : 1];
	evloop_ready_now(pidfds, n, ready); /* a -1 is never ready */
	for (size_t i = 0; i < n; i++)
		if (pidfds[i] >= 0) {
			watched++;
			gone += ready[i];
		}
	return !(watched && gone == watched);
}

uint64_t follow_deadline(double seconds)
{
	return seconds > 0 ? time_now_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9) : 0;
}

/* Whether process pid uses librecce: it maps librecce.so, or its
 * executable defines recce_event (librecce.a linked in). */
static int uses_librecce(pid_t pid)
{
	char p[64], line[4096];
	int found = 0;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(p, "re");
	if (f) {
		while (!found && fgets(line, sizeof(line), f))
			found = strstr(line, "/librecce.so") != NULL;
		fclose(f);
	}
	if (found)
		return 1;
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	found = elf_defines(fd, "recce_event");
	close(fd);
	return found;
}

int follow_open_events(struct ring_reader *r, pid_t pid, char *path, size_t len, double seconds)
{
	int err = ring_reader_open_pid(r, pid, path, len);
	if (err != -ENOENT || !uses_librecce(pid))
		return err;
	note("process %d uses librecce but has written no event yet: waiting for its first%s",
	     (int)pid, seconds > 0 ? "" : " (Ctrl-C to stop)");
	sigset_t old;
	int sfd = block_stop_signals(&old), pidfd = proc_pidfd_open(pid);
	uint64_t deadline = follow_deadline(seconds);
	while ((err = ring_reader_open_pid(r, pid, path, len)) == -ENOENT &&
	       follow_wait(sfd, &pidfd, 1, deadline))
		;
	if (err == -ENOENT)
		err = pidfd >= 0 && kill(pid, 0) != 0 ? -ESRCH : -ETIMEDOUT;
	unblock_stop_signals(sfd, &old);
	if (pidfd >= 0)
		close(pidfd);
	return err;
}
