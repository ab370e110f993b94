/*
 * The messages of recce record (see cmd-record.h): why sampling could not
 * start, and which descendants of an idle process were the busy ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
