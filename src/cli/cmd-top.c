/*
 * recce top: a live view of what the threads of running processes are
 * doing (CPU, context switches, memory, and the function each one is in).
 * This file parses options, sets up the session (top/session.h), runs
 * batch mode or the screen over it, and turns error codes into messages;
 * the page docs/recce-top.md is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/top-ui.h"
#include "cli/usage.h"
#include "util/signals.h"

#define DEFAULT_FREQ  49
#define DEFAULT_DELAY 1.0

enum { V_PID, V_DELAY, V_FREQ, V_COUNT, V_HISTORY, V_CALL_GRAPH };

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct top_session *s = ctx;
	long long v;

	switch (o->set) {
	case V_PID:
		parse_pid_list("top", "-p", arg, &s->pids, &s->npids);
		break;
	case V_DELAY:
		if (parse_seconds(arg, &s->delay) < 0 || s->delay < 0.05)
			usage_die("top", "-d wants a number of seconds of at least 0.05, not '%s'",
				  arg);
		break;
	case V_FREQ:
		s->freq = (unsigned)parse_freq_option("top", arg);
		break;
	case V_COUNT:
		if (parse_int(arg, 1, 1LL << 40, &s->count) < 0)
			usage_die("top", "-n wants a positive count, not '%s'", arg);
		break;
	case V_CALL_GRAPH: {
		enum call_graph cg;
		int given = parse_call_graph_option("top", arg, &cg, &s->stack_bytes);
		s->dwarf = cg != CALL_GRAPH_FP;
		s->fp_after = cg == CALL_GRAPH_AUTO;
		s->copy_grows = cg == CALL_GRAPH_AUTO && !given;
		break;
	}
	case V_HISTORY:
		if (parse_int(arg, 1, TOP_MAX_HISTORY, &v) < 0)
			usage_die("top", "--history must be between 1 and %d, not '%s'",
				  TOP_MAX_HISTORY, arg);
		s->history = (unsigned)v;
		break;
	}
}

static const struct opt top_options[] = {
    OPT_CALL_('p', "pid", "PID[,PID...]", set_value, V_PID,
	      "watch these processes; comm:NAME, exe:PATH: those that match"),
    OPT_CALL_('d', "delay", "S", set_value, V_DELAY, "seconds between snapshots (default 1)"),
    OPT_CALL_('F', "freq", "HZ", set_value, V_FREQ, "samples per second (default 49)"),
    OPT_FLAG_('b', "batch", struct top_session, batch, "print snapshots as text"),
    OPT_CALL_('n', "count", "N", set_value, V_COUNT, "stop after N snapshots"),
    OPT_FLAG_(0, "json", struct top_session, json, "with -b: one JSON object a snapshot"),
    OPT_CALL_(0, "history", "N", set_value, V_HISTORY, "intervals kept for the stack views"),
    OPT_CALL_(0, "call-graph", "auto|fp|dwarf[,BYTES]", set_value, V_CALL_GRAPH,
	      "how stacks are walked, as recce record walks them (default auto)"),
    OPT_END_(),
};

static void parse_args(struct top_session *s, int argc, char **argv)
{
	int first;

	s->delay = DEFAULT_DELAY;
	s->freq = DEFAULT_FREQ;
	s->dwarf = s->fp_after = s->copy_grows = 1; /* --call-graph auto */
	s->stack_bytes = CALL_GRAPH_STACK_BYTES;
	s->history = TOP_DEFAULT_HISTORY;
	first = options_parse("top", top_options, 0, argc, argv, s, NULL);
	if (first < argc)
		usage_die("top", "unexpected argument '%s'", argv[first]);
	if (s->json && !s->batch)
		usage_die("top", "--json goes with -b (batch mode)");
}

static void check_pids(const struct top_session *s)
{
	for (size_t i = 0; i < s->npids; i++)
		if (kill(s->pids[i], 0) < 0 && errno == ESRCH)
			die("no process with PID %d", (int)s->pids[i]);
}

/* The words for a sampler the kernel refused: the screen and the
 * batch header show them. */
static void describe_sampling_off(struct top_session *s)
{
	int err = s->sampling_err;

	if (err == -EACCES || err == -EPERM)
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "perf_event_open refused: no function columns; run as root, grant "
			 "CAP_PERFMON, or lower kernel.perf_event_paranoid to 0 "
			 "(sysctl -w kernel.perf_event_paranoid=0)");
	else if (err == -EMFILE || err == -ENFILE)
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "out of file descriptors: no function columns (raise 'ulimit -n')");
	else
		snprintf(s->sampling_off, sizeof(s->sampling_off),
			 "cannot sample: %s: no function columns", strerror(-err));
}

static int run_batch(struct top_session *s)
{
	for (;;) {
		if (top_session_wait(s, -1) < 0)
			return 0;
		int err = top_session_snapshot(s);
		if (err)
			die("cannot read the processes: %s", strerror(-err));
		top_batch_print(s, stdout);
		s->shown++;
		if (s->npids && !s->nalive) {
			note("every watched process has exited");
			return 0;
		}
		if (s->count && s->shown >= s->count)
			return 0;
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_session s;
	sigset_t old_mask;
	int status;

	memset(&s, 0, sizeof(s));
	parse_args(&s, argc, argv);
	check_pids(&s);
	s.stop_fd = block_stop_signals(&old_mask);
	int err = top_session_init(&s);
	if (err == -ENOMEM)
		die("out of memory");
	if (err)
		die("cannot set up: %s", strerror(-err));
	if (!s.sampler)
		describe_sampling_off(&s);
	if (!s.sampler && s.batch && !s.json)
		warning("%s", s.sampling_off);

	/* The first reading is the baseline every rate of the first
	 * snapshot is measured against; it is not shown. */
	err = top_session_snapshot(&s);
	if (err)
		die("cannot read the processes: %s", strerror(-err));
	if (s.npids && !s.nalive)
		die("every watched process exited before the first snapshot");

	status = s.batch ? run_batch(&s) : top_tui_run(&s);

	top_session_release(&s);
	unblock_stop_signals(s.stop_fd, &old_mask);
	free(s.pids);
	return status;
}
