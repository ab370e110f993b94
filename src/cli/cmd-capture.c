/*
 * recce capture: a flamegraph of the next calls of a function in a live
 * process, each call on its own (eflambe's capture, for native code).
 * This file parses the options, wires the capture engine (capture/capture.h)
 * to the recording engines and says how it went; capture-write.c cuts the
 * recording into the calls and writes them. The page docs/recce-capture.md
 * is its --help.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/cmd-capture.h"
#include "cli/cmd-record.h"
#include "cli/cmd-trace.h"
#include "cli/dirs.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "capture/capture.h"
#include "cli/usage.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "profile/aggregate.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "symbols/symbolize.h"
#include "trace/trace-limits.h"
#include "util/outfile.h"
#include "util/shell.h"
#include "util/signals.h"

#define DEFAULT_FILE	"capture.svg"
#define DEFAULT_FREQ	4999
#define DEFAULT_CALLS	1
#define DEFAULT_SECONDS 30

enum { V_PID, V_CALLS, V_FREQ, V_TIME, V_LIMIT, V_FORMAT, V_CALL_GRAPH };

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct capture_args *a = ctx;

	switch (o->set) {
	case V_PID:
		parse_pid_list("capture", "-p", arg, &a->pids, &a->npids);
		break;
	case V_CALLS:
		if (parse_int(arg, 1, 10000, &a->calls) < 0)
			usage_die("capture", "--calls wants 1 to 10000 calls, not '%s'", arg);
		break;
	case V_FREQ:
		a->freq = parse_freq_option("capture", arg);
		break;
	case V_TIME:
		if (parse_seconds(arg, &a->seconds) < 0)
			usage_die("capture", "--time wants seconds (0: no limit), not '%s'", arg);
		break;
	case V_LIMIT:
		parse_limit_option("capture", arg, &a->rate_n, &a->rate_ms);
		break;
	case V_FORMAT:
		if (render_format_parse(arg, &a->format) < 0 || a->format == RENDER_LINES ||
		    a->format == RENDER_CALLGRIND)
			usage_die(
			    "capture",
			    "--format must be svg, speedscope, chrome, pprof, folded or text, "
			    "not '%s'",
			    arg);
		break;
	case V_CALL_GRAPH:
		parse_call_graph_option("capture", arg, &a->call_graph, &a->stack_bytes);
		break;
	}
}

static const struct opt capture_options[] = {
    OPT_CALL_('p', "pid", "PID", set_value, V_PID, "the process"),
    OPT_CALL_('n', "calls", "N", set_value, V_CALLS, "capture the next N calls (default 1)"),
    OPT_CALL_('F', "freq", "HZ", set_value, V_FREQ, "samples per second (default 4999)"),
    OPT_CALL_(0, "time", "S", set_value, V_TIME, "give up after S seconds (default 30)"),
    OPT_CALL_(0, "limit", "N/MS", set_value, V_LIMIT, "the circuit breaker (default 1000/1000)"),
    OPT_OUTPUT_('o', "output", "FILE", struct capture_args, output,
		"where to write (default capture.svg)"),
    OPT_CALL_(0, "format", "FORMAT", set_value, V_FORMAT,
	      "svg (default), speedscope, chrome, pprof, folded or text"),
    OPT_FLAG_(0, "split", struct capture_args, split, "one file per call: FILE-1.svg, ..."),
    OPT_CALL_(0, "call-graph", "auto|fp|dwarf[,BYTES]", set_value, V_CALL_GRAPH,
	      "how stacks are walked (default auto)"),
    OPT_END_(),
};

static void parse_args(struct capture_args *a, int argc, char **argv)
{
	int dashdash, first;

	memset(a, 0, sizeof(*a));
	a->calls = DEFAULT_CALLS;
	a->freq = DEFAULT_FREQ;
	a->seconds = DEFAULT_SECONDS;
	a->rate_n = TRACE_DEFAULT_RATE_N;
	a->rate_ms = TRACE_DEFAULT_RATE_MS;
	a->output = DEFAULT_FILE;
	a->format = RENDER_SVG;
	a->stack_bytes = CALL_GRAPH_STACK_BYTES;
	a->invocation = shell_join("recce", (const char *const *)argv, (size_t)argc);
	first = options_parse("capture", capture_options, 0, argc, argv, a, &dashdash);
	a->patterns = argv + first;
	a->npatterns = (size_t)(argc - first);
	if (dashdash < argc)
		usage_die("capture",
			  "capture attaches to a running process (-p PID); it starts none");
	if (a->npids != 1)
		usage_die("capture", "give one process: -p PID");
	if (!a->npatterns)
		usage_die("capture", "name the function whose calls to capture");
	if (!*a->output)
		usage_die("capture", "-o wants a file name");
	if (a->split && (a->format == RENDER_TEXT || strcmp(a->output, "-") == 0))
		usage_die("capture", "--split writes one file a call: give -o FILE, not text");
}

static void say_failed(const struct capture_args *a, struct capture *c, int err)
{
	if (!c || err == -ENOMEM) {
		error("out of memory");
	} else if (capture_sampling_failed(c)) {
		/* Sampling fails as record's does: say it as record says it. */
		struct record_args ra;
		memset(&ra, 0, sizeof(ra));
		ra.pids = a->pids;
		ra.npids = a->npids;
		record_say_start_failed(&ra, capture_sampler(c), err);
	} else {
		struct trace_args ta = {0};
		ta.pids = a->pids;
		ta.npids = a->npids;
		ta.patterns = a->patterns;
		ta.npatterns = a->npatterns;
		ta.max_probes = 100;
		ta.max_events = 100;
		ta.ret = 1;
		trace_say_failed(&ta, capture_tracer(c), err);
	}
}

/*
 * Data pages per CPU of the sampling rings. Each sample carries its stack
 * copy (8 KiB): at capture's 4999 Hz a busy thread fills perf's default
 * 2 MiB a CPU in 50 ms, less than a reader can spend reading a library's
 * unwind tables for the first time on a busy machine. 8 MiB a CPU holds
 * 200 ms, within 64 MiB for the machine (fewer with many CPUs, never
 * under the default); where the kernel's limit on locked memory is lower,
 * the rings are halved until they fit. 0: the default.
 */
static size_t ring_pages(const struct capture_args *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), page = sysconf(_SC_PAGESIZE);
	size_t pages = 2048;

	/* Set by the tests, to see lost samples said (as trace's). */
	if (getenv("RECCE_RING_PAGES"))
		return strtoul(getenv("RECCE_RING_PAGES"), NULL, 0);
	if (a->call_graph == CALL_GRAPH_FP || cpus <= 0 || page <= 0)
		return 0;
	while (pages > 512 && pages * (size_t)page * (size_t)cpus > ((size_t)64 << 20))
		pages /= 2;
	return pages;
}

int cmd_capture(int argc, char **argv)
{
	struct capture_args a;
	sigset_t old_mask;
	struct capture *c = NULL;
	int status = RECCE_EXIT_ERROR;

	parse_args(&a, argc, argv);
	check_pids_exist(a.pids, a.npids);
	int err = outfile_check(a.output);
	if (err)
		die("cannot write '%s': %s", a.output, output_strerror(err));
	struct trace_pattern *pats = calloc(a.npatterns, sizeof(*pats));
	struct symbolizer *sym = symbolizer_new();
	struct proc_registry *procs = sym ? procs_new(sym) : NULL;
	struct aggregate *agg = aggregate_new();
	struct resolver *res = procs ? resolver_new(procs, sym, 1000000000LL / a.freq) : NULL;
	if (!pats || !sym || !procs || !agg || !res || dirs_use_cache(sym, TABLE_BUILD_MAX) < 0)
		die("out of memory");
	for (size_t i = 0; i < a.npatterns; i++)
		if (trace_pattern_parse(a.patterns[i], &pats[i]) < 0 ||
		    pats[i].kind == TRACE_PATTERN_USDT)
			usage_die("capture",
				  "'%s' is not a function pattern: [OBJECT:]FUNCTION, "
				  "OBJECT:0xADDRESS or py:GLOB (USDT probes: recce trace)",
				  a.patterns[i]);
	aggregate_enable_timeline(agg, TIMELINE_MAX_BYTES);
	if (!aggregate_timeline(agg))
		die("out of memory");

	int sfd = block_stop_signals(&old_mask);
	struct capture_config cfg = {
	    .pid = a.pids[0],
	    .patterns = pats,
	    .npatterns = a.npatterns,
	    .calls = (uint64_t)a.calls,
	    .time_ns = (uint64_t)(a.seconds * 1e9),
	    .rate_n = a.rate_n,
	    .rate_ms = a.rate_ms,
	    .max_probes = 100,
	    .freq = (unsigned)a.freq,
	    .dwarf = a.call_graph != CALL_GRAPH_FP,
	    .fp_after = a.call_graph == CALL_GRAPH_AUTO,
	    .stack_bytes = a.stack_bytes,
	    .ring_pages = ring_pages(&a),
	    .stop_fd = sfd,
	    .procs = procs,
	    .agg = agg,
	    .resolver = res,
	};
	err = capture_new(&cfg, &c);
	if (!err) {
		trace_say_python(capture_tracer(c));
		err = capture_start(c);
	}
	if (err) {
		say_failed(&a, c, err);
		goto out;
	}
	struct tracer_stats ts;
	char what[160];
	tracer_get_stats(capture_tracer(c), &ts);
	if (ts.pythons) /* Python functions by their patterns: "of py:handle" */
		for (size_t i = 0, len = 0; i < a.npatterns && len < sizeof(what); i++)
			len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s",
						i ? ", " : "", a.patterns[i]);
	else
		trace_what_traced(&ts, what, sizeof(what));
	note("capturing the next %lld call%s of %s in process %d, sampling its threads at %lld "
	     "Hz; limits: --time %g, --limit %llu/%llu",
	     a.calls, a.calls == 1 ? "" : "s", what, (int)a.pids[0], a.freq, a.seconds,
	     (unsigned long long)a.rate_n, (unsigned long long)a.rate_ms);
	err = capture_run(c);
	unblock_stop_signals(sfd, &old_mask);
	sfd = -1;
	if (err)
		error("the capture stopped early: %s", strerror(-err));

	const struct trace_record *recs;
	size_t n = capture_calls(c, &recs);
	tracer_get_stats(capture_tracer(c), &ts);
	if (n < (size_t)a.calls)
		warning("%zu of the %lld calls asked for finished before the capture stopped (%s)",
			n, a.calls,
			ts.stop == TRACE_STOP_TIME	? "--time"
			: ts.stop == TRACE_STOP_SIGNAL	? "a signal"
			: ts.stop == TRACE_STOP_EXITED	? "the process exited"
			: ts.stop == TRACE_STOP_BREAKER ? "the --limit circuit breaker"
							: "it stopped");
	if (ts.stop == TRACE_STOP_BREAKER)
		trace_say_raise_limit(&ts, a.rate_n, a.rate_ms, 0);
	if (resolver_add(res, agg, 0) < 0 || resolver_add_timeline(res, agg) < 0)
		die("out of memory while symbolizing");
	struct sampler_stats ss;
	sampler_get_stats(capture_sampler(c), &ss);
	ss.unwind_ends[UNWIND_END_NO_INFO] = resolver_no_unwind_info(res);
	ss.python.unplaced = resolver_python_unplaced(res);
	struct profile *p = resolver_profile(res);
	struct sampler_info info = {a.invocation, 1, ss.samples};
	sampler_describe(capture_sampler(c), &ss, &info, p);
	status =
	    n ? capture_write(&a, p, capture_tracer(c), recs, n, ss.start_ns) : RECCE_EXIT_ERROR;
	if (ss.lost)
		warning("the kernel lost %" PRIu64
			" records of the sampling when its ring was full "
			"(recce read them too slowly): the calls lack those samples; a lower -F "
			"helps",
			ss.lost);
	if (!n)
		error("no call of %s finished while captured: nothing written", a.patterns[0]);
	if (err && !status)
		status = RECCE_EXIT_ERROR;
out:
	if (sfd >= 0)
		unblock_stop_signals(sfd, &old_mask);
	capture_free(c);
	resolver_free(res);
	aggregate_free(agg);
	procs_free(procs);
	symbolizer_free(sym);
	for (size_t i = 0; pats && i < a.npatterns; i++)
		trace_pattern_release(&pats[i]);
	free(pats);
	free(a.pids);
	free(a.invocation);
	return status;
}
