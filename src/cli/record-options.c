/*
 * recce record's options: the table --help and the completion are made
 * from, the values checked as they are parsed, and the defaults (see
 * cmd-record.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmd-record.h"
#include "cli/grant.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "remote/scopes.h"
#include "profile/profile.h"
#include "sampling/sampler.h"
#include "util/shell.h"

#define DEFAULT_FREQ	       99
#define DEFAULT_ALLOC_INTERVAL (512u << 10) /* as Go and tcmalloc */

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
		a->stack_bytes_given =
		    parse_call_graph_option("record", arg, &a->call_graph, &a->stack_bytes);
		break;
	case V_G:
		a->call_graph = CALL_GRAPH_FP;
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
    OPT_CALL_('p', "pid", "PID[,PID...]", set_value, V_PID,
	      "sample these processes; comm:NAME, exe:PATH: those that match"),
    OPT_CALL_('t', "tid", "TID[,TID...]", set_value, V_TID, "sample only these threads"),
    OPT_FLAG_('a', "all-cpus", struct record_args, all, "every process, on every CPU"),
    OPT_STRING_(0, "cgroup", "PATH", struct record_args, cgroup,
		"every process of this cgroup (a container, a service)"),
    OPT_CALL_('e', "event", "EVENT", set_value, V_EVENT,
	      "cpu (the default), offcpu (time blocked), wall (both) or alloc (allocations)"),
    OPT_CALL_(0, "alloc-interval", "SIZE", set_value, V_ALLOC_INTERVAL,
	      "--event alloc: one sample per SIZE allocated (default 512K)"),
    OPT_FLAG_NEEDS_(0, "fast", struct record_args, fast, SCOPE_TRACE | SCOPE_PATCH,
		    "--event alloc: sample in the process, through recce's library and jumps on "
		    "the allocator, not uprobes"),
    OPT_FLAG_(0, "leaks", struct record_args, leaks,
	      "--event alloc: what is in use by stack every second, and the stacks whose use only "
	      "grew (growing_space)"),
    OPT_CALL_('F', "freq", "HZ", set_value, V_FREQ, "samples per second (default 99)"),
    OPT_CALL_('d', "duration", "S", set_value, V_DURATION, "stop after S seconds"),
    OPT_OUTPUT_('o', "output", "FILE", struct record_args, output,
		"the profile to write (default recce.pb.gz)"),
    OPT_CALL_(0, "call-graph", "auto|fp|dwarf[,BYTES]", set_value, V_CALL_GRAPH,
	      "how stacks are walked (default auto)"),
    OPT_CALL_('g', NULL, NULL, set_value, V_G, "the same as --call-graph fp, as in perf"),
    OPT_FLAG_(0, "timeline", struct record_args, timeline,
	      "keep the order of samples, for Chrome trace"),
    OPT_FLAG_(0, "tree", struct record_args, tree,
	      "with -p: their descendants too, existing and new"),
    OPT_FLAG_(0, "per-thread", struct record_args, per_thread,
	      "with -p or a command: each thread sampled by its own CPU time, not each CPU "
	      "(threads shorter than a period go unsampled)"),
    OPT_FLAG_(0, "jit-map", struct record_args, jit_map,
	      "ask each JVM target for its perf map at the end (jcmd PID Compiler.perfmap)"),
    OPT_FLAG_(0, "no-symbolize", struct record_args, no_symbolize,
	      "keep addresses and build-ids; name them later with recce symbolize"),
    OPT_END_(),
};

void record_parse_args(struct record_args *a, int argc, char **argv)
{
	int dashdash, first;

	memset(a, 0, sizeof(*a));
	a->freq = DEFAULT_FREQ;
	a->output = RECORD_DEFAULT_FILE;
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
	/* After --, a command beside targets times the recording, as in
	 * perf record -a -- sleep 2. Before it, an option's value given to
	 * one that takes none reads as the command: say which word that was. */
	if (a->argv && (a->npids || a->ntids || a->all) && first < dashdash)
		usage_die("record",
			  "'%s' reads as a command to run, beside %s: to record while a command "
			  "runs, put it after --",
			  a->argv[0],
			  a->npids    ? "-p"
			  : a->ntids  ? "-t"
			  : a->cgroup ? "--cgroup"
				      : "-a");
	a->beside = a->argv && (a->npids || a->ntids || a->all);
	if (!!a->npids + !!a->ntids + !!a->all > 1)
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
	if (a->leaks && a->event != RECORD_ALLOC)
		usage_die("record", "--leaks goes with --event alloc");
	if (a->fast && a->event != RECORD_ALLOC)
		usage_die("record", "--fast goes with --event alloc (CPU and off-CPU samples are "
				    "the kernel's, at no cost to the target's calls)");
	if (a->event != RECORD_ALLOC && strcmp(a->alloc_text, "512K") != 0)
		usage_die("record", "--alloc-interval goes with --event alloc");
	if (!*a->output)
		usage_die("record", "-o wants a file name");
	if (a->tree && !a->npids)
		usage_die("record", "--tree follows the processes of -p PID");
	if (a->per_thread && ((!a->npids && (!a->argv || a->beside)) || a->event == RECORD_ALLOC))
		usage_die("record",
			  "--per-thread says how the CPU samples of -p PID or of a command "
			  "are taken (-t is always sampled per thread, -a per CPU)");
	if (a->freq_given && a->event == RECORD_OFFCPU)
		usage_die("record", "-F sets the rate of CPU samples: --event offcpu takes a stack "
				    "at every switch off a CPU (--event wall takes both)");
}
