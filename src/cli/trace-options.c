/*
 * recce trace's options: the table --help and the completion are made
 * from, the values checked as they are parsed, and the combinations
 * refused before anything is touched (see cmd-trace.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd-trace.h"
#include "cli/grant.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "perf/uprobe.h"
#include "remote/scopes.h"
#include "trace/trace-cond.h"
#include "trace/trace-file.h"
#include "util/shell.h"
#include "util/when.h"

static void parse_wrap(struct trace_args *a, const char *s)
{
	long long count;
	int n = parse_size_prefix(s, &a->wrap_size);

	if (n <= 0 || s[n] != ',' || parse_int(s + n + 1, 1, 1000, &count) < 0 ||
	    a->wrap_size < TRACE_FILE_MIN_WRAP)
		usage_die("trace",
			  "--wrap wants SIZE,COUNT (SIZE at least %d bytes, with K, M or G; COUNT "
			  "1 to 1000), not '%s'",
			  TRACE_FILE_MIN_WRAP, s);
	a->wrap_count = (unsigned)count;
}

/* The options whose values need checking, by their tag. */
enum {
	V_PID,
	V_HIST,
	V_REPORT,
	V_COUNT,
	V_TIME,
	V_LIMIT,
	V_MAX_PROBES,
	V_MAX_EVENTS,
	V_FORMAT,
	V_WRAP,
	V_TREE,
	V_CALL_GRAPH
};

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct trace_args *a = ctx;
	long long v;

	switch (o->set) {
	case V_PID:
		parse_pid_list("trace", "-p", arg, &a->pids, &a->npids);
		break;
	case V_HIST:
		a->hist = a->ret = 1;
		break;
	case V_REPORT:
		a->report = a->ret = 1;
		break;
	case V_COUNT:
		if (parse_int(arg, 0, INT32_MAX, &a->count) < 0)
			usage_die("trace",
				  "--count wants a number of events (0: no limit), not '%s'", arg);
		break;
	case V_TIME:
		if (parse_seconds(arg, &a->seconds) < 0)
			usage_die("trace", "--time wants seconds (0: no limit), not '%s'", arg);
		break;
	case V_LIMIT:
		parse_limit_option("trace", arg, &a->rate_n, &a->rate_ms);
		a->limit_given = 1;
		break;
	case V_MAX_PROBES:
		if (parse_int(arg, 1, 100000, &v) < 0)
			usage_die("trace", "--max-probes wants 1 to 100000, not '%s'", arg);
		a->max_probes = v;
		break;
	case V_MAX_EVENTS:
		if (parse_int(arg, 0, 10000000, &a->max_events) < 0)
			usage_die("trace", "--max-events wants a number (0: no limit), not '%s'",
				  arg);
		break;
	case V_FORMAT:
		if (strcmp(arg, "text") == 0)
			a->format = TRACE_FORMAT_TEXT;
		else if (strcmp(arg, "json") == 0)
			a->format = TRACE_FORMAT_JSON;
		else if (strcmp(arg, "chrome") == 0)
			a->format = TRACE_FORMAT_CHROME, a->ret = 1; /* a slice has an end */
		else
			usage_die("trace", "--format must be text, json or chrome, not '%s'", arg);
		break;
	case V_WRAP:
		parse_wrap(a, arg);
		break;
	case V_TREE:
		a->t.tree = a->ret = 1;
		break;
	case V_CALL_GRAPH:
		a->stack_bytes_given =
		    parse_call_graph_option("trace", arg, &a->call_graph, &a->stack_bytes);
		if (a->call_graph != CALL_GRAPH_FP && a->stack_bytes > UPROBE_MAX_STACK)
			usage_die("trace",
				  "--call-graph %s,BYTES: a call carries at most %u bytes "
				  "of stack",
				  a->call_graph == CALL_GRAPH_AUTO ? "auto" : "dwarf",
				  UPROBE_MAX_STACK);
		a->call_graph_given = 1;
		break;
	}
}

void tree_option_set(const char *cmd, enum tree_option which, const char *arg, struct tree_args *t)
{
	switch (which) {
	case TREE_DEPTH:
		if (parse_int(arg, 1, 1000000, &t->depth) < 0)
			usage_die(cmd, "--depth wants a number of levels from 1, not '%s'", arg);
		break;
	case TREE_MIN_DURATION:
		if (when_span(arg, &t->min_ns) < 0)
			usage_die(cmd, "--min-duration wants a duration (100us, 5ms, 1s), not '%s'",
				  arg);
		break;
	case TREE_SLOW:
		if (when_span(arg, &t->slow_ns) < 0 || !t->slow_ns)
			usage_die(cmd, "--slow wants a duration (100us, 5ms, 1s), not '%s'", arg);
		t->tree = 1;
		break;
	case TREE_KEEP:
		if (parse_int(arg, 1, 100000, &t->keep) < 0)
			usage_die(cmd, "--keep wants a number of trees from 1, not '%s'", arg);
		break;
	}
}

void tree_options_check(const char *cmd, const struct tree_args *t)
{
	if (t->keep && !t->slow_ns)
		usage_die(cmd, "--keep N keeps the N slowest trees of --slow: add --slow DUR");
	if (!t->tree && (t->depth || t->min_ns))
		usage_die(cmd, "--depth and --min-duration shape a --tree: add --tree");
}

struct trace_tree_config tree_options_config(const struct tree_args *t, FILE *out)
{
	struct trace_tree_config c = {.max_depth = (unsigned)t->depth,
				      .min_ns = (uint64_t)t->min_ns,
				      .slow_ns = (uint64_t)t->slow_ns,
				      .keep = (unsigned)t->keep,
				      .out = out};
	return c;
}

/* A tree option of trace: a tree is of calls and their returns. */
static void set_tree(void *ctx, const char *arg, const struct opt *o)
{
	struct trace_args *a = ctx;

	tree_option_set("trace", (enum tree_option)o->set, arg, &a->t);
	a->ret |= a->t.tree;
}

static const struct opt trace_options[] = {
    OPT_CALL_('p', "pid", "PID[,PID...]", set_value, V_PID,
	      "trace these processes; comm:NAME, exe:PATH: those that match"),
    OPT_FLAG_(0, "args", struct trace_args, show_args,
	      "show arguments, as raw registers without DWARF"),
    OPT_FLAG_(0, "return", struct trace_args, ret, "also trace returns: value and duration"),
    OPT_FLAG_(0, "stack", struct trace_args, stack, "print the caller chain under each call"),
    OPT_CALL_(0, "call-graph", "auto|fp|dwarf[,BYTES]", set_value, V_CALL_GRAPH,
	      "with --stack: how callers are found (default auto: the stack copied and "
	      "unwound)"),
    OPT_FLAG_(0, "caller", struct trace_args, caller, "append the immediate caller to each call"),
    OPT_FLAG_NEEDS_(0, "fast", struct trace_args, fast, SCOPE_TRACE | SCOPE_PATCH,
		    "load recce's library into the process: calls at in-process cost"),
    OPT_STRING_(0, "if", "EXPR", struct trace_args, cond_text, "only calls for which EXPR holds"),
    OPT_CALL_(0, "count", "N", set_value, V_COUNT, "stop after N events (default 10)"),
    OPT_CALL_(0, "time", "S", set_value, V_TIME, "stop after S seconds (default 15)"),
    OPT_CALL_(0, "limit", "N/MS", set_value, V_LIMIT, "the circuit breaker (default 1000/1000)"),
    OPT_CALL_(0, "max-probes", "N", set_value, V_MAX_PROBES,
	      "refuse patterns matching more than N functions"),
    OPT_CALL_(0, "max-events", "N", set_value, V_MAX_EVENTS,
	      "without BPF links: at most N probe events (default 100)"),
    OPT_CALL_(0, "format", "FORMAT", set_value, V_FORMAT, "text, json or chrome"),
    OPT_CALL_(0, "hist", NULL, set_value, V_HIST, "a histogram of durations per function"),
    OPT_CALL_(0, "report", NULL, set_value, V_REPORT,
	      "at the end, the calls summed by function: total and own time"),
    OPT_OUTPUT_('o', "output", "FILE", struct trace_args, output,
		"write the events into a trace file (with --plot: the plot)"),
    OPT_STRING_(0, "plot", "X:Y", struct trace_args, plot,
		"with -o FILE.svg: a scatter plot of Y against X, one point a call"),
    OPT_CALL_(0, "wrap", "SIZE,COUNT", set_value, V_WRAP, "with -o: COUNT files of SIZE"),
    OPT_CALL_(0, "tree", NULL, set_value, V_TREE, "calls nested as they ran, with durations"),
    OPT_CALL_(0, "depth", "N", set_tree, TREE_DEPTH, "with --tree: N levels of calls"),
    OPT_CALL_(0, "min-duration", "DUR", set_tree, TREE_MIN_DURATION,
	      "with --tree: leave out calls shorter than DUR (100us, 5ms)"),
    OPT_CALL_(0, "slow", "DUR", set_tree, TREE_SLOW,
	      "a flight recorder: the trees of calls that lasted DUR or longer, only"),
    OPT_CALL_(0, "keep", "N", set_tree, TREE_KEEP, "with --slow: the N slowest, at the end"),
    OPT_OUTPUT_(0, "profile", "FILE", struct trace_args, profile,
		"with --slow: write the samples of each slow call's thread as a profile"),
    OPT_END_(),
};

/* --tree prints nested text on the terminal: what it cannot go with. */
static void check_tree(const struct trace_args *a)
{
	tree_options_check("trace", &a->t);
	if (!a->t.tree)
		return;
	const char *opt = a->t.slow_ns ? "--slow" : "--tree";
	if (a->output)
		usage_die("trace",
			  "%s prints the calls here (redirect them into a file with >): to keep "
			  "every event, write them with -o FILE and no %s, then see them with "
			  "recce replay %s FILE",
			  opt, opt, opt);
	if (a->format == TRACE_FORMAT_CHROME)
		usage_die("trace",
			  "--format chrome draws each call as a slice, nested as the calls "
			  "ran: leave out %s",
			  opt);
	if (a->format != TRACE_FORMAT_TEXT)
		usage_die("trace", "%s prints text: leave out --format", opt);
	if (a->hist || a->stack)
		usage_die("trace", "%s shows every call with its duration: leave out %s", opt,
			  a->hist ? "--hist" : "--stack");
}

/* --report prints one table at the end, in place of the events. */
static void check_report(const struct trace_args *a)
{
	if (!a->report)
		return;
	if (a->output)
		usage_die("trace", "--report prints its table here: leave out -o, or write -o FILE "
				   "without it, then recce replay --report FILE");
	if (a->hist || a->t.tree || a->stack || a->format != TRACE_FORMAT_TEXT)
		usage_die("trace", "--report prints one table in place of the events: leave out %s",
			  a->hist     ? "--hist"
			  : a->t.tree ? (a->t.slow_ns ? "--slow" : "--tree")
			  : a->stack  ? "--stack"
				      : "--format");
}

/* What --fast does not do yet, refused before anything is touched. */
static void check_fast(struct trace_args *a)
{
	if (a->argv)
		usage_die("trace", "--fast attaches to a running process: start the command, then "
				   "give -p PID");
	if (a->stack)
		usage_die("trace", "--fast shows the immediate --caller, not --stack: leave out "
				   "--fast for the caller chain");
	/* A traced call costs the process tens of nanoseconds, not tens of
	 * microseconds: the breaker's default is a hundred times higher. */
	if (!a->limit_given)
		a->rate_n = TRACE_FAST_RATE_N;
}

void trace_parse_args(struct trace_args *a, int argc, char **argv)
{
	int dashdash, first;

	memset(a, 0, sizeof(*a));
	a->count = TRACE_DEFAULT_COUNT;
	a->seconds = TRACE_DEFAULT_SECONDS;
	a->rate_n = TRACE_DEFAULT_RATE_N;
	a->rate_ms = TRACE_DEFAULT_RATE_MS;
	a->max_probes = 100;
	a->max_events = 100;
	a->call_graph = CALL_GRAPH_AUTO;
	a->stack_bytes = CALL_GRAPH_STACK_BYTES;
	first = options_parse("trace", trace_options, 0, argc, argv, a, &dashdash);
	if (a->profile)
		a->invocation = shell_join("recce", (const char *const *)argv, (size_t)argc);
	a->patterns = argv + first;
	a->npatterns = (size_t)(dashdash - first);
	if (dashdash < argc - 1) {
		a->argv = argv + dashdash + 1;
		grant_need(SCOPE_EXEC, "trace -- CMD");
	}
	if (!a->npatterns)
		usage_die("trace", "name at least one function to trace");
	if (!a->npids && !a->argv)
		usage_die("trace", "nothing to trace: give -p PID or a command after --");
	if (a->npids && a->argv)
		usage_die("trace", "give either -p PID or a command, not both");
	if (a->wrap_size && !a->output)
		usage_die("trace", "--wrap needs -o FILE");
	if (a->plot && !a->output)
		usage_die("trace", "--plot needs -o FILE.svg");
	if (a->plot && a->wrap_size)
		usage_die("trace", "--plot writes a plot, not trace files: no --wrap");
	if (a->profile && !a->t.slow_ns)
		usage_die("trace",
			  "--profile FILE writes the samples of slow calls: add --slow DUR");
	if (a->format == TRACE_FORMAT_CHROME && (a->output || a->hist))
		usage_die("trace",
			  "--format chrome prints one Chrome trace here (redirect it into a "
			  "file with >): %s",
			  a->hist ? "leave out --hist"
				  : "or write -o FILE without it, then recce replay "
				    "--format chrome FILE");
	if (a->call_graph_given && !a->stack)
		usage_die("trace", "--call-graph says how --stack finds a call's callers: add "
				   "--stack, or leave --call-graph out");
	check_tree(a);
	check_report(a);
	if (a->fast)
		check_fast(a);
	if (a->cond_text)
		a->cond = parse_cond_option("trace", a->cond_text);
}
