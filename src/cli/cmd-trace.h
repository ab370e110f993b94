/*
 * recce trace's options as parsed (cmd-trace.c), and the messages that
 * turn the tracer's results into words (trace-messages.c).
 */
#ifndef RECCE_CLI_CMD_TRACE_H
#define RECCE_CLI_CMD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/usage.h"
#include "trace/trace-event.h"
#include "trace/trace-tree.h"
#include "trace/tracer.h"

/* The options that shape a call tree, as trace and replay take them. */
struct tree_args {
	int tree;	 /* --tree (or --slow): calls nested, as they ran */
	long long depth; /* --depth: tree levels shown (0: all) */
	int64_t min_ns;	 /* --min-duration: shorter calls not in the tree */
	int64_t slow_ns; /* --slow: only trees whose top call lasted this long */
	long long keep;	 /* --keep: the slowest this many, at the end */
};

enum tree_option { TREE_DEPTH, TREE_MIN_DURATION, TREE_SLOW, TREE_KEEP };

/* trace-options.c: the value of a tree option of cmd into t (exits 2 with
 * a message on a bad one); --slow makes a tree. */
void tree_option_set(const char *cmd, enum tree_option which, const char *arg, struct tree_args *t);
/* Refuses --depth or --min-duration without a tree, --keep without --slow. */
void tree_options_check(const char *cmd, const struct tree_args *t);
/* t as the tree engine's configuration, printing to out. */
struct trace_tree_config tree_options_config(const struct tree_args *t, FILE *out);

struct trace_args {
	pid_t *pids;
	size_t npids;
	char **argv;
	char **patterns;
	size_t npatterns;
	int show_args, ret, stack, caller, hist;
	/* --stack's walk: --call-graph, its bytes of stack, and whether given. */
	enum call_graph call_graph;
	uint32_t stack_bytes;
	int call_graph_given;
	int stack_bytes_given; /* --call-graph MODE,BYTES: the copy does not grow */
	int report;	    /* --report: the calls summed by function, at the end */
	struct tree_args t; /* --tree, --slow and what shapes them */
	int fast;	    /* --fast: injected, not uprobes */
	int limit_given;    /* --limit was given */
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
	const char *profile; /* --profile FILE: the slow calls' samples, as a profile */
	char *invocation;    /* "recce trace ...", for the profile */
};

/* A failed tracer step, as one message a person can act on. */
void trace_say_failed(const struct trace_args *a, const struct tracer *t, int err);
/* Warns of functions whose arguments will show as raw registers. */
void trace_say_probes(const struct trace_args *a, const struct tracer *t);
/* A Python traced through CPython's probes: what it costs the target
 * (trace_say_probes says it too). */
void trace_say_python(const struct tracer *t);
/* What a trace holds, for its first line: "3 functions, 1 USDT probe and
 * Python calls". */
void trace_what_traced(const struct tracer_stats *st, char *buf, size_t cap);
/* After the circuit breaker tripped: what each call costs, and the limit
 * to ask for if the target can afford more. */
void trace_say_raise_limit(const struct tracer_stats *st, uint64_t rate_n, uint64_t rate_ms,
			   int fast);
/* How many events were shown and why tracing stopped. */
void trace_say_stop(const struct trace_args *a, const struct tracer_stats *st);
/* The warnings about what was lost, and the histograms (--hist). */
void trace_say_losses(const struct trace_args *a, struct tracer *t, const struct tracer_stats *st);

/* After a --tree or --slow (of trace or replay), made with cfg: the calls
 * it left out, if any, and why; the slow calls found. */
void trace_say_tree(const struct trace_tree *tree, const struct trace_tree_config *cfg);

/* After a --report (of trace or replay): the table of the calls summed
 * by function, and the calls that had not returned. Returns 0, or -1
 * when no call returned (nothing printed: the caller says why). */
struct trace_report;
int trace_print_report(struct trace_report *rep);

/* trace-options.c: parses argv into a (exits 2 with a message on a usage
 * error). */
void trace_parse_args(struct trace_args *a, int argc, char **argv);

#endif
