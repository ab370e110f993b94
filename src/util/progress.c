/*
 * Progress lines on the pipe an agent gives its commands (see progress.h).
 */
#include "util/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/lines.h"

#define EVERY_NS 500000000ULL /* at most two lines a second */

static int fd = -1; /* the pipe, or -1 */

void progress_init(void)
{
	const char *env = getenv(PROGRESS_ENV);
	char *end;

	if (!env || !*env)
		return;
	long v = strtol(env, &end, 10);
	if (!*end && v >= 0 && v < 1 << 20 && fcntl((int)v, F_SETFD, FD_CLOEXEC) == 0)
		fd = (int)v;
	unsetenv(PROGRESS_ENV);
}

void progress(const char *what, uint64_t done, uint64_t total, const char *unit)
{
	static uint64_t last;

	if (fd < 0)
		return;
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	if (now < last + EVERY_NS && (!total || done < total))
		return;
	last = now;
	/* One write of a short line: whole on a pipe, never interleaved. The
	 * agent makes the pipe non-blocking: a full one costs this line. */
	char line[300];
	int n = snprintf(line, sizeof(line), "%.200s\t%" PRIu64 "\t%" PRIu64 "\t%.20s\n", what,
			 done, total, unit);
	if (write(fd, line, (size_t)n) < 0 && errno != EAGAIN && errno != EINTR)
		fd = -1;
}

int progress_parse(char *line, const char **what, uint64_t *done, uint64_t *total,
		   const char **unit)
{
	char *f[4];
	char *p = line;

	for (int i = 0; i < 4; i++) {
		f[i] = p;
		p = strchr(p, '\t');
		if ((i < 3) != (p != NULL))
			return -EINVAL;
		if (p)
			*p++ = 0;
	}
	const char *n1 = f[1], *n2 = f[2];
	if (lines_parse_dec(&n1, done) < 0 || *n1 || lines_parse_dec(&n2, total) < 0 || *n2)
		return -EINVAL;
	*what = f[0];
	*unit = f[3];
	return 0;
}
