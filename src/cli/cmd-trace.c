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
#include "cli/trace-plot.h"
#include "cli/trace-profile.h"
#include "cli/usage.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"
#include "trace/trace-pattern.h"
#include "trace/trace-tree.h"
#include "trace/tracer.h"
#include "trace/trace-report.h"
#include "profile/pprof.h"
#include "util/outfile.h"
#include "util/signals.h"

/* What the sink needs: where events go. */
struct trace_out {
	const struct trace_args *a;
	struct trace_writer *writer;
	int write_err;
	struct tracer *tracer; /* stopped at once when a write fails */
	struct trace_plot *plot;
	struct trace_tree *tree;     /* --tree */
	struct trace_report *report; /* --report */
	int printed;		     /* events printed: a Chrome trace's commas */
};

/* The tracer's sink: each event to the trace file or the terminal, and
 * in text, a call's callers below it. */
static void sink(void *arg, const struct trace_record *r, const struct tracer_frame *stack,
		 size_t nstack)
{
	struct trace_out *o = arg;

	/* Caught up: what was shown reaches a file or a pipe now, not when
	 * the buffer fills. */
	if (!r) {
		if (o->writer && !o->write_err) {
			o->write_err = trace_writer_flush(o->writer);
			if (o->write_err && o->tracer)
				tracer_stop(o->tracer, TRACE_STOP_OUTPUT);
		} else if (!o->a->hist && !o->report) {
			fflush(stdout);
		}
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
	if (o->tree) {
		if (trace_tree_add(o->tree, r) < 0 && o->tracer)
			tracer_stop(o->tracer, TRACE_STOP_OUTPUT);
		return;
	}
	if (o->report) {
		if (trace_report_add(o->report, r) < 0 && o->tracer)
			tracer_stop(o->tracer, TRACE_STOP_OUTPUT);
		return;
	}
	/* --hist shows the histograms only, as bpftrace's hist() does. */
	if (o->a->hist)
		return;
	trace_record_print(r, o->a->format, !o->printed++, stdout);
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
	for (size_t i = 0; i < a->npatterns; i++) {
		if (trace_pattern_parse(a->patterns[i], &pats[i]) < 0)
			usage_die("trace",
				  "'%s' is not a pattern: [OBJECT:]FUNCTION, OBJECT:0xADDRESS, "
				  "usdt:[OBJECT:]PROVIDER:NAME[(NAME:TYPE,...)] (types str, int, "
				  "uint, hex) or py:FUNCTION",
				  a->patterns[i]);
		if (a->format == TRACE_FORMAT_CHROME && pats[i].kind == TRACE_PATTERN_USDT)
			usage_die("trace",
				  "--format chrome draws calls as slices, and '%s' is a probe with "
				  "no end: leave out --format chrome",
				  a->patterns[i]);
		if (a->fast && pats[i].kind != TRACE_PATTERN_FUNCTION)
			usage_die("trace",
				  "--fast puts jumps into functions; '%s' is a probe the kernel "
				  "traces: leave out --fast",
				  a->patterns[i]);
	}
	return pats;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a;
	struct trace_out out = {&a, NULL, 0, NULL, NULL, NULL, NULL, 0};
	struct tracer *t = NULL;
	struct tracer_stats st;
	sigset_t old_mask;
	int err, status = RECCE_EXIT_ERROR;

	trace_parse_args(&a, argc, argv);
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
	if (a.profile && (err = pprof_check_writable(a.profile)) != 0)
		die("cannot write '%s': %s", a.profile, output_strerror(err));
	int sfd = block_stop_signals(&old_mask);
	/* For the tests: rings small enough to overflow. */
	size_t ring_pages =
	    getenv("RECCE_RING_PAGES") ? strtoul(getenv("RECCE_RING_PAGES"), NULL, 0) : 0;
	/* Sampling first, so that a call is sampled from its start (a
	 * command's, once it exists: see held below). */
	struct trace_profile *tp = a.profile ? trace_profile_new(&a, ring_pages) : NULL;
	if (tp && !a.argv)
		trace_profile_start(tp, a.pids, a.npids);
	struct trace_tree_config tc = tree_options_config(&a.t, stdout);
	if (tp) {
		tc.shown = trace_profile_shown;
		tc.shown_arg = tp;
	}
	if (a.t.tree && trace_tree_new(&tc, &out.tree) < 0)
		die("out of memory");
	if (a.report && !(out.report = trace_report_new()))
		die("out of memory");
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
	    .stack_bytes = a.call_graph == CALL_GRAPH_FP ? 0 : a.stack_bytes,
	    .fp_after = a.call_graph == CALL_GRAPH_AUTO,
	    .copy_grows = a.call_graph == CALL_GRAPH_AUTO && !a.stack_bytes_given,
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
	    .no_links = getenv("RECCE_NO_LINKS") != NULL,
	    .ring_pages = ring_pages,
	    /* Uretprobes instead of probes on the exits, for comparisons
	     * (make bench) and the tests that show what they break. */
	    .return_uretprobe = getenv("RECCE_RETURN_URETPROBE") != NULL,
	    .fast = a.fast,
	    .sink = sink,
	    .sink_arg = &out,
	    /* A command is sampled from before its exec. */
	    .held = tp && a.argv ? trace_profile_held : NULL,
	    .held_arg = tp,
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
	char what[160];
	trace_what_traced(&st, what, sizeof(what));
	if (a.npids)
		note("tracing %s in %s %d with %s; limits: --count %lld, --time %g, "
		     "--limit %llu/%llu",
		     what, st.ntargets > 1 ? "processes from" : "process", (int)st.first,
		     a.fast	     ? "jumps into recce's library"
		     : st.uses_links ? "BPF links"
		     : st.uses_bpf   ? "BPF on perf uprobe events"
				     : "perf uprobe events",
		     a.count, a.seconds, (unsigned long long)a.rate_n,
		     (unsigned long long)a.rate_ms);
	/* One Chrome trace document around the events, as replay's. */
	if (a.format == TRACE_FORMAT_CHROME)
		fputs("{\"traceEvents\":[\n", stdout);
	int run_err = tp ? trace_profile_run(tp, t) : tracer_run(t);
	if (a.format == TRACE_FORMAT_CHROME)
		fputs("\n]}\n", stdout);
	fflush(stdout);
	tracer_get_stats(t, &st);
	if (out.tree) {
		trace_tree_flush(out.tree);
		fflush(stdout);
		trace_say_tree(out.tree, &tc);
	}
	if (out.report && trace_print_report(out.report) < 0)
		note("no traced call returned while recce traced: the report has no line");
	trace_say_stop(&a, &st);
	trace_say_losses(&a, t, &st);
	status = tp ? trace_profile_write(tp) : 0;
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
	 * stop signals delivered again. Without one, they stay blocked to the
	 * end: a Ctrl-C that comes as the trace ends on its own does not turn
	 * a finished trace into a failure. */
	if (a.argv) {
		unblock_stop_signals(sfd, &old_mask);
		sfd = -1;
	}
	tracer_wait_child(t);
out:
	if (sfd >= 0)
		close(sfd); /* recce ends now; what came is the trace's */
	/* Here only when the trace never started: leave no empty file. */
	trace_writer_discard(out.writer);
	if (out.plot)
		free(out.plot->p);
	tracer_free(t);
	trace_profile_free(tp);
	trace_tree_free(out.tree);
	trace_report_free(out.report);
	for (size_t i = 0; i < a.npatterns; i++)
		trace_pattern_release(&pats[i]);
	free(pats);
	trace_cond_free(a.cond);
	free(a.pids);
	free(a.invocation);
	return status;
}
