/*
 * recce trace's options as parsed (cmd-trace.c), and the messages that
 * turn the tracer's results into words (trace-messages.c).
 */
#ifndef RECCE_CLI_CMD_TRACE_H
#define RECCE_CLI_CMD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace-event.h"
#include "trace/tracer.h"

struct trace_args {
	pid_t *pids;
	size_t npids;
	char **argv;
	char **patterns;
	size_t npatterns;
	int show_args, ret, stack, caller, hist;
	int tree;	 /* --tree: calls nested, as they ran */
	long long depth; /* --depth: tree levels shown (0: all) */
	int64_t min_ns;	 /* --min-duration: shorter calls not in the tree */
	int64_t slow_ns; /* --slow: only trees whose top call lasted this long */
	long long keep;	 /* --keep: the slowest this many, at the end */
	int fast;	 /* --fast: injected, not uprobes */
	int limit_given; /* --limit was given */
	const char *cond_text;
	struct trace_cond *cond;
	long long count, max_probes, max_events;
	double seconds;
	uint64_t rate_n, rate_ms;
	enum trace_format format;
	const char *output;
	const char *plot; /* --plot X:Y: -o is then the plot */
	uint64_t wrap_size;
	unsigned wrap_count;
};

/* A failed tracer step, as one message a person can act on. */
void trace_say_failed(const struct trace_args *a, const struct tracer *t, int err);
/* Warns of functions whose arguments will show as raw registers. */
void trace_say_probes(const struct trace_args *a, const struct tracer *t);
/* How many events were shown and why tracing stopped. */
void trace_say_stop(const struct trace_args *a, const struct tracer_stats *st);
/* The warnings about what was lost, and the histograms (--hist). */
void trace_say_losses(const struct trace_args *a, struct tracer *t, const struct tracer_stats *st);

/* After a --tree or --slow (of trace or replay), made with cfg: the calls
 * it left out, if any, and why; the slow calls found. */
struct trace_tree;
struct trace_tree_config;
void trace_say_tree(const struct trace_tree *tree, const struct trace_tree_config *cfg);

/* trace-options.c: parses argv into a (exits 2 with a message on a usage
 * error). */
void trace_parse_args(struct trace_args *a, int argc, char **argv);

#endif
