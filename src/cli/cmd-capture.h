/*
 * recce capture's options as parsed (cmd-capture.c), and the writing of
 * the captured calls (capture-write.c).
 */
#ifndef RECCE_CLI_CMD_CAPTURE_H
#define RECCE_CLI_CMD_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/usage.h"
#include "writers/render.h"

struct profile;
struct trace_record;
struct tracer;

struct capture_args {
	pid_t *pids;
	size_t npids;
	char **patterns;
	size_t npatterns;
	long long calls, freq;
	double seconds;
	uint64_t rate_n, rate_ms;
	const char *output;
	enum render_format format;
	int split;
	enum call_graph call_graph;
	uint32_t stack_bytes;
	char *invocation;
};

/*
 * Cuts p, the recording (with its timeline, which started at start_ns,
 * CLOCK_REALTIME), into the n calls whose return records are recs (of the
 * functions t traced), and writes them as a asked: one file, or one a
 * call (--split). Says what it wrote, or why not; returns the exit status.
 */
int capture_write(const struct capture_args *a, const struct profile *p, const struct tracer *t,
		  const struct trace_record *recs, size_t n, int64_t start_ns);

#endif
