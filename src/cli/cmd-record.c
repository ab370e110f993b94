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
#include <sys/wait.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/cmd-record.h"
#include "cli/dirs.h"
#include "cli/profile-messages.h"
#include "cli/record-spans.h"
#include "cli/usage.h"
#include "events/span-follow.h"
#include "perf/perf-events.h"
#include "proc/launch.h"
#include "proc/proc-maps.h"
#include "proc/self.h"
#include "profile/aggregate.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "profile/resolve.h"
#include "profile/timeline.h"
#include "sampling/sampler.h"
#include "symbols/symbolize.h"
#include "util/signals.h"

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	sigset_t old_mask;
	int status = 0;

	record_parse_args(&a, argc, argv);
	check_pids_exist(a.pids, a.npids);
	if (a.tree)
		record_add_descendants(&a);
	check_tids_exist(a.tids, a.ntids);
	/* A command beside that cannot run: said before anything starts. */
	char *runs = a.beside ? launch_which(a.argv[0]) : NULL;
	if (a.beside && !runs)
		die("cannot run '%s': not found on PATH (nothing was recorded)", a.argv[0]);
	if (runs && access(runs, X_OK) != 0)
		die("cannot run '%s': %s (nothing was recorded)", a.argv[0], strerror(errno));
	free(runs);
	int err = pprof_check_writable(a.output);
	if (err)
		die("cannot write '%s': %s", a.output, output_strerror(err));

	struct symbolizer *sym = symbolizer_new();
	struct proc_registry *procs = sym ? procs_new(sym) : NULL;
	struct aggregate *agg = aggregate_new();
	struct aggregate *inuse = a.event == RECORD_ALLOC ? aggregate_new() : NULL;
	struct aggregate *growing = a.leaks ? aggregate_new() : NULL;
	int64_t period = a.event == RECORD_OFFCPU ? 0 : 1000000000LL / a.freq;
	struct resolver *res = procs ? resolver_new(procs, sym, period) : NULL;
	if (!sym || !procs || !agg || !res || (a.event == RECORD_ALLOC && !inuse) ||
	    (a.leaks && !growing) || dirs_use_cache(sym, TABLE_BUILD_MAX) < 0)
		die("out of memory");
	if ((a.event == RECORD_OFFCPU && resolver_name_values(res, "switches", "offcpu") < 0) ||
	    (a.event == RECORD_WALL && resolver_name_values(res, "samples", "wall") < 0) ||
	    (a.event == RECORD_ALLOC &&
	     resolver_name_allocations(res, (int64_t)a.alloc_interval, a.leaks) < 0))
		die("out of memory");
	if (a.no_symbolize)
		resolver_keep_addresses(res);
	if (a.all || a.cgroup)
		resolver_label_comm(res, 1); /* a root frame per process in the views */
	/* The spans of librecce programs recorded label their samples: by
	 * the samples' times, which the timeline keeps. */
	int spans_wanted =
	    a.event != RECORD_ALLOC && !a.all && !a.cgroup && (a.npids || (a.argv && !a.beside));
	if (a.timeline || spans_wanted) {
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
	cfg.argv = a.beside ? NULL : a.argv;
	cfg.system_wide = a.all;
	cfg.per_thread = a.per_thread;
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
	/* For the tests and make bench: the probes of a kernel without
	 * uprobe sessions, or without uprobe_multi links, on one that has
	 * them. */
	cfg.alloc_older = getenv("RECCE_NO_LINKS") ? 2 : getenv("RECCE_ALLOC_NO_SESSIONS") ? 1 : 0;
	cfg.alloc_fast = a.fast;
	cfg.inuse = inuse;
	cfg.growing = growing;
	cfg.growth_every_ns = GROWTH_EVERY_NS;
	cfg.sym = sym;
	cfg.freq = (unsigned)a.freq;
	cfg.duration = a.duration;
	cfg.dwarf = a.call_graph != CALL_GRAPH_FP;
	cfg.fp_after = a.call_graph == CALL_GRAPH_AUTO;
	cfg.stack_bytes = a.stack_bytes;
	cfg.copy_grows = a.call_graph == CALL_GRAPH_AUTO && !a.stack_bytes_given;
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
	if (a.event == RECORD_ALLOC)
		record_say_alloc_probes(s);

	struct record_children children;
	record_children_begin(&a, &children);
	struct launch beside = {0};
	int beside_fd = -1;
	if (a.beside) {
		/* Run as from the shell: the stop signals reach it as they
		 * were before recce blocked them. */
		err = launch_held(&beside, a.argv, &old_mask);
		if (!err)
			err = launch_go(&beside);
		if (err)
			die("cannot run '%s': %s (nothing was recorded)", a.argv[0],
			    strerror(-err));
		beside_fd = proc_pidfd_open(beside.pid);
		if (beside_fd >= 0)
			sampler_until(s, beside_fd);
	}
	pid_t followed[ntargets ? ntargets : 1];
	size_t nfollowed = 0;
	for (size_t i = 0; spans_wanted && i < ntargets; i++)
		if (!t[i].err)
			followed[nfollowed++] = t[i].pid;
	struct span_follow *spans = record_spans_new(followed, nfollowed);
	err = spans ? record_spans_run(s, spans) : sampler_run(s);
	unblock_stop_signals(sfd, &old_mask);
	if (err)
		error("sampling stopped early: %s", strerror(-err));

	struct sampler_stats st;
	sampler_get_stats(s, &st);
	if (st.user_only)
		warning("kernel.perf_event_paranoid forbids kernel sampling: "
			"recorded user-space code only");

	/* The JIT code of the run, listed before it is named. */
	if (a.jit_map)
		record_ask_jit_maps(t, ntargets);
	if (resolver_add(res, agg, 0) < 0)
		die("out of memory while symbolizing");
	if (inuse) {
		resolver_set_column(res, 2);
		if (resolver_add(res, inuse, 0) < 0)
			die("out of memory while symbolizing");
	}
	if (growing) {
		resolver_set_column(res, 4);
		if (resolver_add(res, growing, 0) < 0)
			die("out of memory while symbolizing");
	}
	uint64_t timeline_dropped = aggregate_timeline(agg) ? aggregate_timeline(agg)->dropped : 0;
	if (timeline_dropped && a.timeline)
		warning("the timeline is full: the last %llu samples are counted but not in it",
			(unsigned long long)timeline_dropped);
	else if (timeline_dropped && spans)
		warning(
		    "the samples' times fill 64 MiB: the last %llu samples carry no span labels",
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
	pid_t unnamed[8];
	record_say_jit_unnamed(procs, unnamed, resolver_jit_unnamed(res, unnamed, 8));
	/* Stacks ended in code without unwind information are told from
	 * whole ones by the last frame's name: counted once named. */
	st.unwind_ends[UNWIND_END_NO_INFO] = resolver_no_unwind_info(res);
	st.python.unplaced = resolver_python_unplaced(res);
	struct profile *p = resolver_profile(res);
	struct sampler_info info = {a.invocation, a.timeline,
				    st.samples - (a.timeline ? timeline_dropped : 0)};
	sampler_describe(s, &st, &info, p);
	if (spans && record_spans_label(spans, p, st.start_ns, a.timeline))
		status = RECCE_EXIT_ERROR;
	span_follow_free(spans);

	debuginfod_say_stalled();

	/* A disk that filled up while recording must not lose the profile. */
	char elsewhere[4096];
	const char *written = profile_write_or_say(p, a.output, elsewhere, sizeof(elsewhere));
	if (written != a.output)
		status = RECCE_EXIT_ERROR;

	record_say_written(&a, &st, written);
	/* The command beside: its status is recce's, as a command's of
	 * its own would be; one still running is left to run. */
	struct sampler_stats cst = st;
	if (beside.pid) {
		int ws;
		if (waitpid(beside.pid, &ws, st.stop == SAMPLER_STOP_COMMAND ? 0 : WNOHANG) ==
		    beside.pid) {
			cst.child_exited = 1;
			cst.child_status = ws;
		} else {
			note("'%s' runs on, as process %d", a.argv[0], (int)beside.pid);
		}
	}
	if (beside_fd >= 0)
		close(beside_fd);
	status = record_command_status(&cst, status);
	record_say_busy_children(&a, &children, st.samples);
	if (!st.child_exited && st.stop != SAMPLER_STOP_EXITED && a.event != RECORD_ALLOC) {
		struct aggregate_stats as;
		aggregate_get_stats(agg, &as);
		uint64_t waited = record_wait_ns(&a);
		/* Samples the kernel lost or withheld are said so, not as
		 * unsampled; sampled per CPU, a thread is sampled however
		 * short. */
		record_say_idle(&a, as.period,
				st.lost || st.throttled || st.cpu_wide ? 0 : st.cpu_ns,
				waited > wait_before ? waited - wait_before : 0, st.duration_ns);
	}
	if (a.npids && !st.threads && !status && record_targets_exited(t, ntargets))
		status = RECCE_EXIT_ERROR;
	record_say_losses(&a, &st, cfg.unwind_check);
	record_say_python(&a, &st, procs, t, ntargets);

	sampler_free(s);
	if (cfg.cgroup_fd >= 0)
		close(cfg.cgroup_fd);
	resolver_free(res);
	aggregate_free(agg);
	aggregate_free(inuse);
	aggregate_free(growing);
	procs_free(procs);
	symbolizer_free(sym);
	free(a.pids);
	free(a.tids);
	free(a.invocation);
	return status;
}
