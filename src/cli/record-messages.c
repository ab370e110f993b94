/*
 * The messages of recce record (see cmd-record.h): why sampling could not
 * start, and which descendants of an idle process were the busy ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd-record.h"
#include "cli/usage.h"
#include "proc/self.h"
#include "util/array.h"

void record_say_start_failed(const struct record_args *a, const struct sampler *s, int err)
{
	/* /proc/TID is the thread's, owner included. */
	pid_t foreign = err != -EACCES ? 0
			: a->ntids     ? proc_first_foreign(a->tids, a->ntids)
				       : proc_first_foreign(a->pids, a->npids);

	if (foreign)
		die("perf_event_open refused: process %d belongs to another user, and recce "
		    "needs the right to ptrace it: run recce as that user or as root "
		    "(or grant CAP_PERFMON and CAP_SYS_PTRACE)",
		    (int)foreign);
	if (err == -EACCES && !sampler_exec_failed(s))
		die("perf_event_open refused: lower kernel.perf_event_paranoid "
		    "(sysctl -w kernel.perf_event_paranoid=1) or grant CAP_PERFMON");
	if (sampler_exec_failed(s))
		die("cannot run '%s': %s", a->argv[0], strerror(-err));
	if (err == -EMFILE || err == -ENFILE)
		die("out of file descriptors (recce needs one per thread and CPU): "
		    "raise the limit with 'ulimit -n'");
	if (err == -ESRCH) {
		const struct sampler_target *t;
		size_t n = sampler_targets(s, &t);
		for (size_t i = 0; i < n; i++)
			error("process %d exited before recce could attach", (int)t[i].pid);
		exit(RECCE_EXIT_ERROR);
	}
	die("cannot start sampling: %s", strerror(-err));
}

static ssize_t descendants(const struct record_args *a, struct procstat_task **out, size_t *cap)
{
	struct procstat_reader r;
	ssize_t n;

	if (procstat_reader_init(&r, NULL) < 0)
		return -ENOMEM;
	n = procstat_descendants(&r, a->pids, a->npids, out, cap);
	procstat_reader_release(&r);
	return n;
}

void record_add_descendants(struct record_args *a)
{
	struct procstat_task *kids = NULL;
	size_t cap = 0, pcap = a->npids;
	ssize_t n = descendants(a, &kids, &cap);

	if (n < 0)
		die("cannot list the processes under /proc: %s", strerror((int)-n));
	for (ssize_t i = 0; i < n; i++) {
		pid_t *grown = array_reserve(a->pids, &pcap, a->npids + 1, sizeof(*a->pids));
		if (!grown)
			die("out of memory");
		a->pids = grown;
		a->pids[a->npids++] = kids[i].pid;
	}
	if (n)
		note("--tree: %zd descendant process%s too", n, n == 1 ? "" : "es");
	free(kids);
}

void record_children_begin(const struct record_args *a, struct record_children *c)
{
	memset(c, 0, sizeof(*c));
	if (a->npids && !a->tree) {
		ssize_t n = descendants(a, &c->v, &c->cap);
		c->n = n > 0 ? (size_t)n : 0;
	}
}

void record_say_busy_children(const struct record_args *a, struct record_children *c,
			      uint64_t samples)
{
	struct record_children now = {0};
	char list[256] = "";
	size_t busy = 0, len = 0;

	if (samples || !c->n) {
		free(c->v);
		return;
	}
	ssize_t n = descendants(a, &now.v, &now.cap);
	for (ssize_t i = 0; i < n; i++) {
		uint64_t before = 0;
		for (size_t k = 0; k < c->n; k++)
			if (c->v[k].pid == now.v[i].pid && c->v[k].starttime == now.v[i].starttime)
				before = c->v[k].utime + c->v[k].stime;
		if (now.v[i].utime + now.v[i].stime <= before)
			continue;
		if (busy++ < 4 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d (%s)",
						busy > 1 ? ", " : "", (int)now.v[i].pid,
						now.v[i].comm);
	}
	if (busy)
		warning("the recorded process%s used no CPU, but %zu of %s descendants did: %s%s; "
			"record them with -p, or add --tree to follow the whole process tree",
			a->npids > 1 ? "es" : "", busy, a->npids > 1 ? "their" : "its", list,
			busy > 4 ? ", ..." : "");
	free(now.v);
	free(c->v);
}

void record_say_recording(const struct record_args *a, size_t ntargets)
{
	const char *what = a->ntids ? (ntargets > 1 ? "threads" : "thread")
				    : (ntargets > 1 ? "processes" : "process");
	const char *stop = a->duration > 0 ? "" : "; Ctrl-C to stop";

	if (a->event == RECORD_OFFCPU)
		note("recording %s off-CPU: a stack at every switch%s", what, stop);
	else if (a->event == RECORD_WALL)
		note("recording %s on-CPU at %lld Hz and off-CPU at every switch%s", what, a->freq,
		     stop);
	else
		note("recording %s at %lld Hz%s", what, a->freq, stop);
}

void record_say_written(const struct record_args *a, const struct sampler_stats *st,
			const char *written)
{
	struct stat sb;
	char size[32] = "?", offcpu[96] = "";
	double secs = (double)st->duration_ns / 1e9;

	if (stat(written, &sb) == 0)
		format_bytes(size, sizeof(size), (long long)sb.st_size);
	if (a->event != RECORD_CPU)
		snprintf(offcpu, sizeof(offcpu), " (%llu switch%s, %.2f s off-CPU)",
			 (unsigned long long)st->switches, st->switches == 1 ? "" : "es",
			 (double)st->offcpu_ns / 1e9);
	if (a->event == RECORD_OFFCPU)
		note("%llu switch%s in %.1f s, %.2f s off-CPU, from %zu thread%s, %llu lost; wrote "
		     "%s (%s)",
		     (unsigned long long)st->switches, st->switches == 1 ? "" : "es", secs,
		     (double)st->offcpu_ns / 1e9, st->threads, st->threads == 1 ? "" : "s",
		     (unsigned long long)st->lost, written, size);
	else
		note(
		    "%llu samples%s in %.1f s (%.1f/s; %lld Hz requested per thread on a CPU) from "
		    "%zu thread%s, %llu lost, %llu throttled; wrote %s (%s)",
		    (unsigned long long)st->samples, offcpu, secs, sampler_rate(st), a->freq,
		    st->threads, st->threads == 1 ? "" : "s", (unsigned long long)st->lost,
		    (unsigned long long)st->throttled, written, size);
}

void record_say_idle(const struct record_args *a, uint64_t cpu_ns, int64_t duration_ns)
{
	/* Below 5% of one CPU a CPU profile is mostly noise. */
	if (a->event != RECORD_CPU || a->argv || duration_ns < 1000000000 ||
	    (double)cpu_ns >= 0.05 * (double)duration_ns)
		return;
	note("the target was idle: it ran %.1f%% of one CPU in %.1f s; to see where its threads "
	     "wait, record with --event offcpu (or --event wall for both)",
	     100.0 * (double)cpu_ns / (double)duration_ns, (double)duration_ns / 1e9);
}

int record_targets_exited(const struct sampler_target *t, size_t n)
{
	struct procstat_reader r;
	int any = 0, zombie;

	if (procstat_reader_init(&r, NULL) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (procstat_exited(&r, t[i].pid, &zombie)) {
			error("process %d exited%s without running on a CPU while recorded: the "
			      "profile is empty",
			      (int)t[i].pid, zombie ? " (it is a zombie)" : "");
			any = 1;
		}
	procstat_reader_release(&r);
	return any;
}
