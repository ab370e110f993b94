/*
 * recce record: samples running processes (-p) or a command it launches
 * into a pprof profile. This file validates options, wires the sampler,
 * aggregator, process registry, symbolizer and resolver together, and
 * turns their results and error codes into messages; the page
 * docs/recce-record.md is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/cmd-record.h"
#include "cli/dirs.h"
#include "cli/grant.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "remote/scopes.h"
#include "profile/aggregate.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "profile/timeline.h"
#include "sampling/sampler.h"
#include "symbols/symbolize.h"
#include "util/shell.h"
#include "util/signals.h"

#define DEFAULT_FILE	       "recce.pb.gz"
#define DEFAULT_FREQ	       99
#define DEFAULT_ALLOC_INTERVAL (512u << 10) /* as Go and tcmalloc */
/* About ten million samples: hours of a busy thread at 99 Hz. */
#define TIMELINE_MAX_BYTES (64u << 20)
/* Symbol tables are kept for binaries up to this size; a bigger one is
 * symbolized at the addresses its samples hit only, every time. */
#define TABLE_BUILD_MAX ((uint64_t)64 << 20)

static void parse_event(struct record_args *a, const char *s)
{
	static const char *const names[] = {"cpu", "offcpu", "wall", "alloc"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			a->event = (enum record_event)i;
			/* Allocations are sampled by probes in the process. */
			if (a->event == RECORD_ALLOC)
				grant_need(SCOPE_TRACE, "record --event alloc");
			return;
		}
	usage_die("record", "--event must be cpu, offcpu, wall or alloc, not '%s'", s);
}

enum { V_PID, V_TID, V_FREQ, V_DURATION, V_CALL_GRAPH, V_G, V_EVENT, V_ALLOC_INTERVAL };

static void set_value(void *ctx, const char *arg, const struct opt *o)
{
	struct record_args *a = ctx;

	switch (o->set) {
	case V_PID:
		parse_pid_list("record", "-p", arg, &a->pids, &a->npids);
		break;
	case V_TID:
		parse_pid_list("record", "-t", arg, &a->tids, &a->ntids);
		break;
	case V_FREQ:
		a->freq = parse_freq_option("record", arg);
		a->freq_given = 1;
		break;
	case V_DURATION:
		if (parse_seconds(arg, &a->duration) < 0 || a->duration <= 0)
			usage_die("record", "-d wants a positive number of seconds, not '%s'", arg);
		break;
	case V_CALL_GRAPH:
		parse_call_graph_option("record", arg, &a->dwarf, &a->stack_bytes);
		break;
	case V_G:
		a->dwarf = 0;
		break;
	case V_EVENT:
		parse_event(a, arg);
		break;
	case V_ALLOC_INTERVAL: {
		int n = parse_size_prefix(arg, &a->alloc_interval);
		if (n < 0 || arg[n] || !a->alloc_interval)
			usage_die("record", "--alloc-interval wants a size such as 512K, not '%s'",
				  arg);
		a->alloc_text = arg;
		break;
	}
	}
}

static const struct opt record_options[] = {
    OPT_CALL_('p', "pid", "PID[,PID...]", set_value, V_PID, "sample these processes"),
    OPT_CALL_('t', "tid", "TID[,TID...]", set_value, V_TID, "sample only these threads"),
    OPT_FLAG_('a', "all-cpus", struct record_args, all, "every process, on every CPU"),
    OPT_STRING_(0, "cgroup", "PATH", struct record_args, cgroup,
		"every process of this cgroup (a container, a service)"),
    OPT_CALL_('e', "event", "EVENT", set_value, V_EVENT,
	      "cpu (the default), offcpu (time blocked), wall (both) or alloc (allocations)"),
    OPT_CALL_(0, "alloc-interval", "SIZE", set_value, V_ALLOC_INTERVAL,
	      "--event alloc: one sample per SIZE allocated (default 512K)"),
    OPT_CALL_('F', "freq", "HZ", set_value, V_FREQ, "samples per second (default 99)"),
    OPT_CALL_('d', "duration", "S", set_value, V_DURATION, "stop after S seconds"),
    OPT_OUTPUT_('o', "output", "FILE", struct record_args, output,
		"the profile to write (default recce.pb.gz)"),
    OPT_CALL_(0, "call-graph", "fp|dwarf[,BYTES]", set_value, V_CALL_GRAPH,
	      "how stacks are walked (default fp)"),
    OPT_CALL_('g', NULL, NULL, set_value, V_G, "the same as --call-graph fp, as in perf"),
    OPT_FLAG_(0, "timeline", struct record_args, timeline,
	      "keep the order of samples, for Chrome trace"),
    OPT_FLAG_(0, "tree", struct record_args, tree,
	      "with -p: their descendants too, existing and new"),
    OPT_FLAG_(0, "no-symbolize", struct record_args, no_symbolize,
	      "keep addresses and build-ids; name them later with recce symbolize"),
    OPT_END_(),
};

static void parse_args(struct record_args *a, int argc, char **argv)
{
	int dashdash, first;

	memset(a, 0, sizeof(*a));
	a->freq = DEFAULT_FREQ;
	a->output = DEFAULT_FILE;
	a->stack_bytes = CALL_GRAPH_STACK_BYTES;
	a->alloc_interval = DEFAULT_ALLOC_INTERVAL;
	a->alloc_text = "512K";
	a->invocation = shell_join("recce", (const char *const *)argv, (size_t)argc);
	/* In order: the first operand is the command's name. */
	first = options_parse("record", record_options, OPTIONS_IN_ORDER, argc, argv, a, &dashdash);
	if (first < dashdash)
		a->argv = argv + first;
	else if (dashdash < argc - 1)
		a->argv = argv + dashdash + 1;
	if (a->argv)
		grant_need(SCOPE_EXEC, "record -- CMD");
	if (a->cgroup)
		a->all = 1; /* the same per-CPU events, for the cgroup's tasks */
	if (!a->npids && !a->ntids && !a->argv && !a->all)
		usage_die("record",
			  "nothing to record: give -p PID, -t TID, -a or a command after --");
	if (!!a->npids + !!a->ntids + !!a->argv + !!a->all > 1)
		usage_die("record", "give one of -p PID, -t TID, -a or a command");
	if (a->all && a->event != RECORD_CPU)
		usage_die("record",
			  "-a records CPU time: --event offcpu, wall and alloc follow -p");
	if (a->event == RECORD_ALLOC && !a->npids)
		usage_die("record", "--event alloc probes the allocator of running processes: give "
				    "-p PID (start a command first, then record it)");
	if (a->event == RECORD_ALLOC && (a->freq_given || a->timeline))
		usage_die("record", "--event alloc samples by bytes allocated (--alloc-interval), "
				    "not by time: -F and --timeline do not apply");
	if (a->event != RECORD_ALLOC && strcmp(a->alloc_text, "512K") != 0)
		usage_die("record", "--alloc-interval goes with --event alloc");
	if (!*a->output)
		usage_die("record", "-o wants a file name");
	if (a->tree && !a->npids)
		usage_die("record", "--tree follows the processes of -p PID");
	if (a->freq_given && a->event == RECORD_OFFCPU)
		usage_die("record", "-F sets the rate of CPU samples: --event offcpu takes a stack "
				    "at every switch off a CPU (--event wall takes both)");
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	sigset_t old_mask;
	int status = 0;

	parse_args(&a, argc, argv);
	check_pids_exist(a.pids, a.npids);
	if (a.tree)
		record_add_descendants(&a);
	check_tids_exist(a.tids, a.ntids);
	int err = pprof_check_writable(a.output);
	if (err)
		die("cannot write '%s': %s", a.output, output_strerror(err));

	struct symbolizer *sym = symbolizer_new();
	struct proc_registry *procs = sym ? procs_new(sym) : NULL;
	struct aggregate *agg = aggregate_new();
	struct aggregate *inuse = a.event == RECORD_ALLOC ? aggregate_new() : NULL;
	int64_t period = a.event == RECORD_OFFCPU ? 0 : 1000000000LL / a.freq;
	struct resolver *res = procs ? resolver_new(procs, sym, period) : NULL;
	if (!sym || !procs || !agg || !res || (a.event == RECORD_ALLOC && !inuse) ||
	    dirs_use_cache(sym, TABLE_BUILD_MAX) < 0)
		die("out of memory");
	if ((a.event == RECORD_OFFCPU && resolver_name_values(res, "switches", "offcpu") < 0) ||
	    (a.event == RECORD_WALL && resolver_name_values(res, "samples", "wall") < 0) ||
	    (a.event == RECORD_ALLOC &&
	     resolver_name_allocations(res, (int64_t)a.alloc_interval) < 0))
		die("out of memory");
	if (a.no_symbolize)
		resolver_keep_addresses(res);
	if (a.timeline) {
		aggregate_enable_timeline(agg, TIMELINE_MAX_BYTES);
		if (!aggregate_timeline(agg))
			die("out of memory");
	}

	int sfd = block_stop_signals(&old_mask);
	struct sampler_config cfg = {0};
	cfg.pids = a.pids;
	cfg.npids = a.npids;
	cfg.tids = a.tids;
	cfg.ntids = a.ntids;
	cfg.argv = a.argv;
	cfg.system_wide = a.all;
	cfg.cgroup_fd = a.cgroup ? record_open_cgroup(a.cgroup) : -1;
	cfg.child_sigmask = &old_mask;
	static const unsigned events[] = {
	    [RECORD_CPU] = PERF_EVENTS_CPU_CLOCK,
	    [RECORD_OFFCPU] = PERF_EVENTS_SWITCHES,
	    [RECORD_WALL] = PERF_EVENTS_CPU_CLOCK | PERF_EVENTS_SWITCHES,
	    [RECORD_ALLOC] = PERF_EVENTS_ALLOC,
	};
	cfg.events = events[a.event];
	cfg.alloc_interval = a.alloc_interval;
	cfg.inuse = inuse;
	cfg.sym = sym;
	cfg.freq = (unsigned)a.freq;
	cfg.duration = a.duration;
	cfg.dwarf = a.dwarf;
	cfg.stack_bytes = a.stack_bytes;
	/* For the tests and for reports of a wrong stack: both unwinders on
	 * every sample, compared. */
	const char *check = getenv("RECCE_UNWIND_CHECK");
	cfg.unwind_check = check && strcmp(check, "1") == 0;
	cfg.stop_fd = sfd;
	cfg.procs = procs;
	cfg.agg = agg;
	cfg.resolver = res;
	struct sampler *s;
	err = sampler_new(&cfg, &s);
	if (err)
		die("cannot start sampling: %s", strerror(-err));
	uint64_t wait_before = record_wait_ns(&a);
	err = sampler_start(s);
	if (err) {
		unblock_stop_signals(sfd, &old_mask);
		record_say_start_failed(&a, s, err);
	}

	const struct sampler_target *t;
	size_t ntargets = sampler_targets(s, &t);
	for (size_t i = 0; i < ntargets; i++) {
		if (t[i].err == -ENOENT && a.event == RECORD_ALLOC) {
			error("process %d maps no allocator recce knows (a Go program allocates in "
			      "its runtime): left out",
			      (int)t[i].pid);
			status = RECCE_EXIT_ERROR;
		} else if (t[i].err) {
			error("process %d exited before recce could attach", (int)t[i].pid);
			status = RECCE_EXIT_ERROR;
		}
	}
	if ((a.npids || a.ntids || a.all) && !status)
		record_say_recording(&a, ntargets);

	struct record_children children;
	record_children_begin(&a, &children);
	err = sampler_run(s);
	unblock_stop_signals(sfd, &old_mask);
	if (err)
		error("sampling stopped early: %s", strerror(-err));

	struct sampler_stats st;
	sampler_get_stats(s, &st);
	if (st.user_only)
		warning("kernel.perf_event_paranoid forbids kernel sampling: "
			"recorded user-space code only");

	if (resolver_add(res, agg, 0) < 0)
		die("out of memory while symbolizing");
	if (inuse) {
		resolver_set_column(res, 2);
		if (resolver_add(res, inuse, 0) < 0)
			die("out of memory while symbolizing");
	}
	uint64_t timeline_dropped = a.timeline ? aggregate_timeline(agg)->dropped : 0;
	if (timeline_dropped)
		warning("the timeline is full: the last %llu samples are counted but not in it",
			(unsigned long long)timeline_dropped);
	if (resolver_add_timeline(res, agg) < 0)
		die("out of memory while writing the timeline");
	size_t jit_dropped, jit_cut;
	resolver_jit_losses(res, &jit_dropped, &jit_cut);
	if (jit_dropped || jit_cut)
		warning(
		    "a perf map of the target is beyond recce's caps: %zu or more entries left out "
		    "(past 1,000,000, or 64 MiB of names), %zu names cut to 512 bytes; JIT "
		    "code they cover is named by address",
		    jit_dropped, jit_cut);
	struct profile *p = resolver_profile(res);
	struct sampler_info info = {a.invocation, a.timeline, st.samples - timeline_dropped};
	sampler_describe(s, &st, &info, p);

	debuginfod_say_stalled();

	/* A disk that filled up while recording must not lose the profile. */
	char elsewhere[4096];
	const char *written = profile_write_or_say(p, a.output, elsewhere, sizeof(elsewhere));
	if (written != a.output)
		status = RECCE_EXIT_ERROR;

	record_say_written(&a, &st, written);
	status = record_command_status(&st, status);
	record_say_busy_children(&a, &children, st.samples);
	if (!st.child_exited && st.stop != SAMPLER_STOP_EXITED && a.event != RECORD_ALLOC) {
		struct aggregate_stats as;
		aggregate_get_stats(agg, &as);
		uint64_t waited = record_wait_ns(&a);
		record_say_idle(&a, as.period, waited > wait_before ? waited - wait_before : 0,
				st.duration_ns);
	}
	if (a.npids && !st.threads && !status && record_targets_exited(t, ntargets))
		status = RECCE_EXIT_ERROR;
	record_say_losses(&a, &st, cfg.unwind_check);

	sampler_free(s);
	if (cfg.cgroup_fd >= 0)
		close(cfg.cgroup_fd);
	resolver_free(res);
	aggregate_free(agg);
	aggregate_free(inuse);
	procs_free(procs);
	symbolizer_free(sym);
	free(a.pids);
	free(a.tids);
	free(a.invocation);
	return status;
}
