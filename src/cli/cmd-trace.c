/*
 * recce trace: Erlang-style call tracing of live native processes. This
 * file parses options, builds the tracer's config (trace/tracer.h), and
 * prints or writes the events the tracer hands it (trace-event,
 * trace-file); trace-messages.c turns the tracer's errors and stops into
 * messages. docs/recce-trace.md is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/cmd-trace.h"
#include "cli/grant.h"
#include "cli/options.h"
#include "remote/scopes.h"
#include "cli/trace-plot.h"
#include "cli/usage.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"
#include "trace/trace-pattern.h"
#include "trace/tracer.h"
#include "util/outfile.h"
#include "util/signals.h"

/* What the sink needs: where events go. */
struct trace_out {
	const struct trace_args *a;
	struct trace_writer *writer;
	int write_err;
	struct tracer *tracer; /* stopped at once when a write fails */
	struct trace_plot *plot;
};

static void parse_wrap(struct trace_args *a, const char *s)
{
	long long count;
	int n = parse_size_prefix(s, &a->wrap_size);

	if (n <= 0 || s[n] != ',' || parse_int(s + n + 1, 1, 1000, &count) < 0 ||
	    a->wrap_size < TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE)
		usage_die("trace",
			  "--wrap wants SIZE,COUNT (SIZE at least %d bytes, with K, M or G; COUNT "
			  "1 to 1000), not '%s'",
			  TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE, s);
	a->wrap_count = (unsigned)count;
}

/* The options whose values need checking, by their tag. */
enum { V_PID, V_HIST, V_COUNT, V_TIME, V_LIMIT, V_MAX_PROBES, V_MAX_EVENTS, V_FORMAT, V_WRAP };

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
		else
			usage_die("trace", "--format must be text or json, not '%s'", arg);
		break;
	case V_WRAP:
		parse_wrap(a, arg);
		break;
	}
}

static const struct opt trace_options[] = {
    OPT_CALL_('p', "pid", "PID[,PID...]", set_value, V_PID, "trace these processes"),
    OPT_FLAG_(0, "args", struct trace_args, show_args,
	      "show arguments, as raw registers without DWARF"),
    OPT_FLAG_(0, "return", struct trace_args, ret, "also trace returns: value and duration"),
    OPT_FLAG_(0, "stack", struct trace_args, stack, "print the caller chain under each call"),
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
    OPT_CALL_(0, "format", "FORMAT", set_value, V_FORMAT, "text or json"),
    OPT_CALL_(0, "hist", NULL, set_value, V_HIST, "a histogram of durations per function"),
    OPT_OUTPUT_('o', "output", "FILE", struct trace_args, output,
		"write the events into a trace file (with --plot: the plot)"),
    OPT_STRING_(0, "plot", "X:Y", struct trace_args, plot,
		"with -o FILE.svg: a scatter plot of Y against X, one point a call"),
    OPT_CALL_(0, "wrap", "SIZE,COUNT", set_value, V_WRAP, "with -o: COUNT files of SIZE"),
    OPT_END_(),
};

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

static void parse_args(struct trace_args *a, int argc, char **argv)
{
	int dashdash, first;

	memset(a, 0, sizeof(*a));
	a->count = TRACE_DEFAULT_COUNT;
	a->seconds = TRACE_DEFAULT_SECONDS;
	a->rate_n = TRACE_DEFAULT_RATE_N;
	a->rate_ms = TRACE_DEFAULT_RATE_MS;
	a->max_probes = 100;
	a->max_events = 100;
	first = options_parse("trace", trace_options, 0, argc, argv, a, &dashdash);
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
	if (a->fast)
		check_fast(a);
	if (a->cond_text)
		a->cond = parse_cond_option("trace", a->cond_text);
}

/* The tracer's sink: each event to the trace file or the terminal, and
 * in text, a call's callers below it. */
static void sink(void *arg, const struct trace_record *r, const struct tracer_frame *stack,
		 size_t nstack)
{
	struct trace_out *o = arg;

	/* Caught up: what was shown reaches a file or a pipe now, not when
	 * the buffer fills. */
	if (!r) {
		if (!o->writer && !o->a->hist)
			fflush(stdout);
		return;
	}
	if (o->plot)
		trace_plot_add(o->plot, r);
	if (o->writer) {
		struct trace_record numbered = *r; /* the writer numbers it */
		int err = trace_writer_write(o->writer, &numbered);
		if (err && !o->write_err) {
			o->write_err = err;
			/* A full disk: stop now, keep what is written. */
			if (o->tracer)
				tracer_stop(o->tracer, TRACE_STOP_OUTPUT);
		}
		return;
	}
	/* --hist shows the histograms only, as bpftrace's hist() does. */
	if (o->a->hist)
		return;
	trace_record_print(r, o->a->format, 0, stdout);
	for (size_t i = 0; i < nstack; i++) {
		if (stack[i].file)
			printf("    at %s (%s:%d)\n", stack[i].name, stack[i].file, stack[i].line);
		else
			printf("    at %s\n", stack[i].name);
	}
}

static struct trace_pattern *parse_patterns(const struct trace_args *a)
{
	struct trace_pattern *pats = calloc(a->npatterns, sizeof(*pats));

	if (!pats)
		die("out of memory");
	for (size_t i = 0; i < a->npatterns; i++)
		if (trace_pattern_parse(a->patterns[i], &pats[i]) < 0)
			usage_die("trace", "'%s' is not a pattern: [OBJECT:]FUNCTION",
				  a->patterns[i]);
	return pats;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a;
	struct trace_out out = {&a, NULL, 0, NULL, NULL};
	struct tracer *t = NULL;
	struct tracer_stats st;
	sigset_t old_mask;
	int err, status = RECCE_EXIT_ERROR;

	parse_args(&a, argc, argv);
	struct trace_plot plot;
	if (a.plot) {
		trace_plot_parse("trace", a.plot, &plot);
		a.ret |= plot.on_return;
		out.plot = &plot;
		if ((err = outfile_check(a.output)) != 0)
			die("cannot write '%s': %s", a.output, output_strerror(err));
	}
	check_pids_exist(a.pids, a.npids);
	struct trace_pattern *pats = parse_patterns(&a);
	if (a.output && !a.plot) {
		/* Refuse an unwritable path before any probe exists. */
		err = trace_writer_new(a.output, a.wrap_size, a.wrap_count,
				       a.npids ? (uint32_t)a.pids[0] : 0, &out.writer);
		if (err)
			die("cannot write '%s': %s", a.output, output_strerror(err));
	}
	int sfd = block_stop_signals(&old_mask);
	struct tracer_config cfg = {
	    .pids = a.pids,
	    .npids = a.npids,
	    .argv = a.argv,
	    .child_sigmask = &old_mask,
	    .patterns = pats,
	    .npatterns = a.npatterns,
	    .max_probes = (size_t)a.max_probes,
	    .max_events = (size_t)a.max_events,
	    .want_args = a.show_args,
	    .want_return = a.ret,
	    .want_caller = a.caller,
	    /* Callers are shown under a call in text on the terminal only. */
	    .want_stack = a.stack && !a.output && a.format == TRACE_FORMAT_TEXT,
	    .want_hist = a.hist,
	    .cond = a.cond,
	    .count = (uint64_t)a.count,
	    .time_ns = (uint64_t)(a.seconds * 1e9),
	    .rate_n = a.rate_n,
	    .rate_ms = a.rate_ms,
	    .stop_fd = sfd,
	    /* Set by the tests of both probe mechanisms, and on kernels whose
	     * BPF misbehaves. */
	    .no_bpf = getenv("RECCE_NO_BPF") != NULL,
	    /* For the tests: rings small enough to overflow. */
	    .ring_pages =
		getenv("RECCE_RING_PAGES") ? strtoul(getenv("RECCE_RING_PAGES"), NULL, 0) : 0,
	    /* Uretprobes instead of probes on the exits, for comparisons
	     * (make bench) and the tests that show what they break. */
	    .return_uretprobe = getenv("RECCE_RETURN_URETPROBE") != NULL,
	    .fast = a.fast,
	    .sink = sink,
	    .sink_arg = &out,
	};
	err = tracer_new(&cfg, &t);
	if (!err) {
		trace_say_probes(&a, t);
		err = tracer_start(t);
	}
	if (err) {
		if (t)
			trace_say_failed(&a, t, err);
		else
			error("out of memory");
		goto out;
	}
	out.tracer = t;
	tracer_get_stats(t, &st);
	if (a.npids)
		note("tracing %zu function%s in %s %d with %s; limits: --count %lld, --time %g, "
		     "--limit %llu/%llu",
		     st.functions, st.functions == 1 ? "" : "s",
		     st.ntargets > 1 ? "processes from" : "process", (int)st.first,
		     a.fast	     ? "jumps into recce's library"
		     : st.uses_links ? "BPF links"
				     : "perf uprobe events",
		     a.count, a.seconds, (unsigned long long)a.rate_n,
		     (unsigned long long)a.rate_ms);
	int run_err = tracer_run(t);
	fflush(stdout);
	tracer_get_stats(t, &st);
	trace_say_stop(&a, &st);
	trace_say_losses(&a, t, &st);
	status = 0;
	if (run_err) {
		/* The probes are removed; what was traced is still written. */
		error("the trace stopped early: %s", strerror(-run_err));
		status = RECCE_EXIT_ERROR;
	}
	if (out.writer) {
		uint64_t n = trace_writer_count(out.writer), kept = trace_writer_kept(out.writer);
		err = trace_writer_close(out.writer);
		out.writer = NULL;
		if (err || out.write_err) {
			error("cannot write '%s': %s%s", a.output,
			      output_strerror(err ? err : out.write_err),
			      out.write_err == -ENOSPC ? "; the events before it are kept" : "");
			status = RECCE_EXIT_ERROR;
		} else if (kept < n) {
			note("wrote %llu events to %s.*; the newest %llu are kept, the %llu before "
			     "them overwritten (--wrap %u files)",
			     (unsigned long long)n, a.output, (unsigned long long)kept,
			     (unsigned long long)(n - kept), a.wrap_count);
		} else {
			note("wrote %llu events to %s%s", (unsigned long long)n, a.output,
			     a.wrap_size ? ".*" : "");
		}
	}
	if (out.plot && trace_plot_write(out.plot, a.output) != 0)
		status = RECCE_EXIT_ERROR;
	out.plot = NULL;
	/* The command runs on, untraced, to its end: wait for it, with the
	 * stop signals delivered again. */
	unblock_stop_signals(sfd, &old_mask);
	sfd = -1;
	tracer_wait_child(t);
out:
	if (sfd >= 0)
		unblock_stop_signals(sfd, &old_mask);
	/* Here only when the trace never started: leave no empty file. */
	trace_writer_discard(out.writer);
	if (out.plot)
		free(out.plot->p);
	tracer_free(t);
	for (size_t i = 0; i < a.npatterns; i++)
		trace_pattern_release(&pats[i]);
	free(pats);
	trace_cond_free(a.cond);
	free(a.pids);
	return status;
}
