/*
 * The messages of recce record (see cmd-record.h): why sampling could not
 * start, and which descendants of an idle process were the busy ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd-record.h"
#include "cli/inject-messages.h"
#include "cli/jit-hint.h"
#include "cli/usage.h"
#include "inject/fast-set.h"
#include "perf/perf-events.h"
#include "perf/py-format.h"
#include "proc/jvm-perfmap.h"
#include "proc/proc-maps.h"
#include "proc/self.h"
#include "util/array.h"

/* --fast: the library could not be loaded into a target, or its malloc
 * hooked. Returns when neither is why sampling could not start. */
static void say_fast_failed(const struct record_args *a, const struct sampler *s, int err)
{
	const struct fast_set_info *fi = sampler_alloc_fast_info(s);
	const struct sampler_target *t;
	size_t n = sampler_targets(s, &t);
	pid_t pid = a->npids ? a->pids[0] : 0;

	if (!fi)
		return;
	for (size_t i = 0; i < n; i++)
		if (t[i].err == err) {
			pid = t[i].pid;
			break;
		}
	if (fi->failure != FAST_OK) {
		fast_say_failed(fi, err, pid, "record");
		exit(RECCE_EXIT_ERROR);
	}
	const char *why, *name = sampler_alloc_fast_refused(s, &why);
	if (err == -ENOTSUP)
		die("cannot sample the allocations of process %d with --fast: its malloc cannot "
		    "take recce's jumps (%s); record without --fast",
		    (int)pid, name && why ? why : "its code does not allow it");
	if (err == -EBUSY)
		die("cannot sample the allocations of process %d with --fast: a thread stayed in "
		    "the allocator's first bytes while recce tried to change them; try again, or "
		    "record without --fast",
		    (int)pid);
}

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
	say_fast_failed(a, s, err);
	if (err == -ENOENT && a->event == RECORD_ALLOC)
		die("no process of -p maps an allocator recce knows (malloc in glibc, jemalloc, "
		    "tcmalloc or its own executable): a Go program allocates in its runtime, "
		    "where 'go tool pprof' reads its heap profile");
	if (err == -EOPNOTSUPP)
		die("this kernel cannot sample allocations through uprobes: --event alloc needs "
		    "Linux 5.15 or later (BPF programs on perf uprobe events, with cookies); add "
		    "--fast to sample them in the process, on any kernel");
	if (err == -ENOENT && a->cgroup)
		die("the kernel gives cgroup %s no perf_event controller, so it cannot be sampled "
		    "alone: on cgroup v2, Linux 6.1 gives one only once a controller has been "
		    "enabled in the root's cgroup.subtree_control (systemd does at boot: echo "
		    "+pids > /sys/fs/cgroup/cgroup.subtree_control); record -a samples every "
		    "process meanwhile",
		    a->cgroup);
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

void record_say_alloc_probes(const struct sampler *s)
{
	struct sampler_stats st;

	sampler_get_stats(s, &st);
	if (st.alloc_fast) {
		const char *why, *name = sampler_alloc_fast_refused(s, &why);
		if (name)
			warning(
			    "%s is not sampled with --fast (%s): the allocations it makes are not "
			    "in the profile; record without --fast to see them",
			    name, why);
		return;
	}
	if (st.alloc_mode == ALLOC_BPF_LINKS)
		warning("allocations are sampled through entry and return probes: this kernel has "
			"no uprobe sessions (Linux 6.13), so every allocation also traps at its "
			"return (on make bench's workload, 7%% more time than with sessions)");
	else if (st.alloc_mode == ALLOC_BPF_EVENTS)
		warning("allocations are sampled through entry and return perf uprobe events: this "
			"kernel has no uprobe_multi links (Linux 6.6) or sessions (6.13), so every "
			"allocation also traps at its return (on make bench's workload, 17%% more "
			"time than with sessions)");
}

void record_say_recording(const struct record_args *a, size_t ntargets)
{
	const char *what = a->ntids ? (ntargets > 1 ? "threads" : "thread")
				    : (ntargets > 1 ? "processes" : "process");
	char until[160];
	const char *stop = a->duration > 0 ? "" : "; Ctrl-C to stop";

	if (a->beside) {
		snprintf(until, sizeof(until), " until '%.120s' exits%s", a->argv[0],
			 a->duration > 0 ? " or -d is up" : "");
		stop = until;
	}

	if (a->all)
		note("recording every process%s%s on %ld CPUs at %lld Hz%s",
		     a->cgroup ? " of cgroup " : "", a->cgroup ? a->cgroup : "",
		     sysconf(_SC_NPROCESSORS_ONLN), a->freq, stop);
	else if (a->event == RECORD_OFFCPU)
		note("recording %s off-CPU: a stack at every switch%s", what, stop);
	else if (a->event == RECORD_ALLOC)
		note("recording the allocations of %zu %s%s, one sample per %s allocated on "
		     "average%s",
		     ntargets, what,
		     !a->fast	    ? ""
		     : ntargets > 1 ? " inside them (--fast)"
				    : " inside it (--fast)",
		     a->alloc_text, stop);
	else if (a->event == RECORD_WALL)
		note("recording %s on-CPU at %lld Hz and off-CPU at every switch%s", what, a->freq,
		     stop);
	else
		note("recording %s at %lld Hz%s", what, a->freq, stop);
}

int record_open_cgroup(const char *path)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/", "/sys/fs/cgroup/unified/",
					     "/sys/fs/cgroup/perf_event/"};
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; fd < 0 && path[0] != '/' && i < sizeof(mounts) / sizeof(mounts[0]);
	     i++) {
		char full[4096];
		snprintf(full, sizeof(full), "%s%s", mounts[i], path);
		fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		die("no cgroup '%s': give its directory (/sys/fs/cgroup/...), or its path under "
		    "the cgroup mount, as /proc/PID/cgroup shows it",
		    path);
	/* A directory of another file system (a plain one made under a
	 * tmpfs at /sys/fs/cgroup) would fail later as "Bad file
	 * descriptor". */
	struct statfs fs;
	if (fstatfs(fd, &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC &&
	    fs.f_type != CGROUP_SUPER_MAGIC)
		die("'%s' is a directory, but not of a cgroup file system: give a cgroup's "
		    "directory (where 'mount -t cgroup2' mounts; /proc/PID/cgroup names a "
		    "process's)",
		    path);
	return fd;
}

/* --leaks: the stacks whose use only grew. */
static void say_leaks(const struct sampler_stats *st, const char *written)
{
	double apart = (double)st->growth_every_ns / 1e9;

	if (st->growing_stacks < 0)
		warning("out of memory while following what is in use: no growing_space");
	else if (st->growth_points < 3)
		note(
		    "--leaks: %zu snapshot%s of what is in use, too few to tell growth (3 or more: "
		    "record longer)",
		    st->growth_points, st->growth_points == 1 ? "" : "s");
	else if (!st->growing_stacks)
		note("--leaks: no stack's use only grew over %zu snapshots %.0f s apart",
		     st->growth_points, apart);
	else
		note(
		    "--leaks: %d stack%s only grew in use over %zu snapshots %.0f s apart (a leak, "
		    "or a cache not yet full): recce report --value growing_space %s",
		    st->growing_stacks, st->growing_stacks == 1 ? "" : "s", st->growth_points,
		    apart, written);
}

/* --fast: what the in-process recorder could not keep. */
static void say_alloc_fast(const struct sampler_stats *st)
{
	const struct alloc_fast_stats *f = &st->fast;

	if (f->lost)
		warning("%llu allocation record%s lost, a thread's ring full or no ring left for "
			"it: the profile holds fewer samples than were taken",
			(unsigned long long)f->lost, f->lost == 1 ? " was" : "s were");
	if (f->no_stack)
		warning("%llu sampled allocation%s made off %s thread's stack (a signal stack, a "
			"coroutine): %s only the allocator and its caller",
			(unsigned long long)f->no_stack, f->no_stack == 1 ? " was" : "s were",
			f->no_stack == 1 ? "its" : "their",
			f->no_stack == 1 ? "it shows" : "they show");
	if (f->untracked)
		warning("%llu sampled allocation%s could not be followed to %s free (recce's table "
			"in the process was full): %s left out of the in-use profile",
			(unsigned long long)f->untracked, f->untracked == 1 ? "" : "s",
			f->untracked == 1 ? "its" : "their",
			f->untracked == 1 ? "it is" : "they are");
	if (f->bad || f->children)
		warning("%llu allocation record%s could not be read (%llu from processes recce "
			"could not find): not in the profile",
			(unsigned long long)(f->bad + f->children),
			f->bad + f->children == 1 ? "" : "s", (unsigned long long)f->children);
	if (f->detach_err)
		warning(
		    "recce could not put the allocator's code back itself (%s): recce's library "
		    "in the process does it as recce exits",
		    strerror(-f->detach_err));
}

/* Processes the target created while recorded: sampled from when recce
 * read of them, ended before that, or not probed at all. */
static void say_alloc_children(const struct sampler_stats *st)
{
	unsigned long long n = st->alloc_followed, ended = st->alloc_ended,
			   bad = st->alloc_unfollowed;

	if (n)
		note("%llu process%s the target created while recorded %s sampled from when recce "
		     "read of %s: allocations made before that are not in the profile",
		     n, n == 1 ? "" : "es", n == 1 ? "was" : "were", n == 1 ? "it" : "them");
	if (ended)
		warning("%llu process%s the target created while recorded ended before recce "
			"read of %s: %s allocations are not in the profile",
			ended, ended == 1 ? "" : "es", ended == 1 ? "it" : "them",
			ended == 1 ? "its" : "their");
	if (bad)
		warning("%llu process%s the target created while recorded could not be probed: "
			"their allocations are not in the profile",
			bad, bad == 1 ? "" : "es");
}

/* A byte count as people read it, in a static buffer. */
static const char *bytes_text(uint64_t n)
{
	static char buf[32];

	format_bytes(buf, sizeof(buf), (long long)n);
	return buf;
}

void record_say_written(const struct record_args *a, const struct sampler_stats *st,
			const char *written)
{
	struct stat sb;
	char size[32] = "?", offcpu[96] = "";
	double secs = (double)st->duration_ns / 1e9;

	if (stat(written, &sb) == 0)
		format_bytes(size, sizeof(size), (long long)sb.st_size);
	char procs[96] = "";
	if (a->all)
		snprintf(procs, sizeof(procs), " of %zu process%s (%llu idle samples left out)",
			 st->processes, st->processes == 1 ? "" : "es",
			 (unsigned long long)st->idle);
	if (a->event == RECORD_OFFCPU || a->event == RECORD_WALL)
		snprintf(offcpu, sizeof(offcpu), " (%llu switch%s, %.2f s off-CPU)",
			 (unsigned long long)st->switches, st->switches == 1 ? "" : "es",
			 (double)st->offcpu_ns / 1e9);
	if (a->event == RECORD_ALLOC) {
		note("%llu allocation%s sampled in %.1f s (about %llu allocations, %s), %llu of "
		     "them freed, %llu still in use, from %zu thread%s; wrote %s (%s)",
		     (unsigned long long)st->alloc.samples, st->alloc.samples == 1 ? "" : "s", secs,
		     (unsigned long long)st->alloc.objects, bytes_text(st->alloc.bytes),
		     (unsigned long long)st->alloc.frees, (unsigned long long)st->alloc.live,
		     st->threads, st->threads == 1 ? "" : "s", written, size);
		if (st->alloc.unfollowed)
			note("%llu of the sampled allocations had no block to follow to its free "
			     "(the call still running as the recording ended, a record of it "
			     "missing, or the allocator returned none): not in the in-use profile",
			     (unsigned long long)st->alloc.unfollowed);
		say_alloc_children(st);
		if (st->alloc_fast)
			say_alloc_fast(st);
		if (a->leaks)
			say_leaks(st, written);
	} else if (a->event == RECORD_OFFCPU)
		note("%llu switch%s in %.1f s, %.2f s off-CPU, from %zu thread%s, %llu records "
		     "lost; "
		     "wrote "
		     "%s (%s)",
		     (unsigned long long)st->switches, st->switches == 1 ? "" : "es", secs,
		     (double)st->offcpu_ns / 1e9, st->threads, st->threads == 1 ? "" : "s",
		     (unsigned long long)st->lost, written, size);
	else
		note("%llu samples%s in %.1f s (%.1f/s; %lld Hz requested per %s) from %zu "
		     "thread%s%s, "
		     "%llu records lost, %llu throttled; wrote %s (%s)",
		     (unsigned long long)st->samples, offcpu, secs, sampler_rate(st), a->freq,
		     a->all || st->cpu_wide ? "CPU" : "thread on a CPU", st->threads,
		     st->threads == 1 ? "" : "s", procs, (unsigned long long)st->lost,
		     (unsigned long long)st->throttled, written, size);
	if (st->cpu_wide_err && a->event != RECORD_ALLOC)
		note("each thread was sampled by its own CPU time, as the BPF program that keeps "
		     "the target's samples of each CPU could not be loaded (%s): a thread that ran "
		     "less than %.1f ms in all has no sample",
		     strerror(-st->cpu_wide_err), 1000.0 / (double)a->freq);
}

int record_command_status(const struct sampler_stats *st, int status)
{
	/* Like perf record and a shell, recce ends the way its command did,
	 * so that scripts see a failing command fail. */
	if (st->child_exited && WIFEXITED(st->child_status) && WEXITSTATUS(st->child_status)) {
		note("the command exited with status %d", WEXITSTATUS(st->child_status));
		if (!status)
			status = WEXITSTATUS(st->child_status);
	} else if (st->child_exited && WIFSIGNALED(st->child_status) &&
		   (st->stop == SAMPLER_STOP_EXITED || st->stop == SAMPLER_STOP_COMMAND)) {
		note("the command was killed by signal %d (%s)", WTERMSIG(st->child_status),
		     strsignal(WTERMSIG(st->child_status)));
		if (!status)
			status = 128 + WTERMSIG(st->child_status);
	}
	return status;
}

void record_ask_jit_maps(const struct sampler_target *t, size_t n)
{
	char why[256];
	size_t jvms = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].err || (i > 0 && t[i].pid == t[i - 1].pid) || !jvm_is(t[i].pid))
			continue;
		jvms++;
		int err = jvm_write_perfmap(t[i].pid, why, sizeof(why));
		if (err == -ENOENT)
			warning(
			    "JVM %d: no jcmd beside its java nor on PATH to ask for its perf map "
			    "(a JDK has it, a JRE not): its JIT code is not named",
			    (int)t[i].pid);
		else if (err == -ETIMEDOUT)
			warning("JVM %d did not write its perf map within 30 s: its JIT code is "
				"not named",
				(int)t[i].pid);
		else if (err)
			warning("JVM %d did not write its perf map (%s): its JIT code is not named",
				(int)t[i].pid, why[0] ? why : strerror(-err));
	}
	if (!jvms)
		note("--jit-map: no target is a JVM, so none was asked for a perf map");
}

void record_say_jit_unnamed(struct proc_registry *procs, const pid_t *pids, size_t n)
{
	char buf[160];

	for (size_t i = 0; i < n; i++) {
		const char *comm = procs_comm(procs, pids[i]);
		if (!comm || !comm[0])
			comm = "?";
		note("%s (pid %d) runs JIT code it keeps no perf map of, shown as [JIT: %s]; %s",
		     comm, (int)pids[i], comm, jit_hint_perf_map(comm, pids[i], buf, sizeof(buf)));
	}
}

void record_say_losses(const struct record_args *a, const struct sampler_stats *st,
		       int unwind_check)
{
	if (st->lost && a->event == RECORD_ALLOC)
		warning("the kernel lost %llu records when its ring was full: allocations, and "
			"frees, so that the bytes in use may be too many; a larger "
			"--alloc-interval helps",
			(unsigned long long)st->lost);
	else if (st->lost)
		warning(
		    a->event == RECORD_OFFCPU
			? "the kernel lost %llu records: the targets switch faster than recce "
			  "reads; off-CPU times around them are too long; --call-graph fp or "
			  "fewer threads helps"
			: "the kernel lost %llu records (samples, and the records that name "
			  "their threads and files) when its ring was full: a lower -F or fewer "
			  "threads helps",
		    (unsigned long long)st->lost);
	const uint64_t *e = st->unwind_ends;
	uint64_t early = e[UNWIND_END_COPY] + e[UNWIND_END_DEPTH] + e[UNWIND_END_NO_INFO] +
			 e[UNWIND_END_OTHER_STACK] + e[UNWIND_END_NOT_PRESENT];
	/* The option that copies more, in the mode in use, up to what the
	 * kernel allows (a frame larger than the copy: memcached's 16 KiB
	 * of iovecs). */
	char copy_more[80];
	call_graph_copy_more(copy_more, sizeof(copy_more), a->call_graph, st->copy_bytes,
			     st->copy_wanted, PERF_EVENTS_MAX_STACK_BYTES, "the kernel copies");
	int grew = st->copy_bytes != a->stack_bytes;
	if (grew && st->copy_cut_before == e[UNWIND_END_COPY])
		snprintf(copy_more, sizeof(copy_more), "each with a copy before it grew");
	if (grew)
		note(
		    "the stack copy grew from %u to %u bytes: %llu of the %llu samples taken with "
		    "smaller copies were cut where it ended (--call-graph auto,%u copies that much "
		    "from the start)",
		    (unsigned)a->stack_bytes, (unsigned)st->copy_bytes,
		    (unsigned long long)st->copy_cut_before, (unsigned long long)st->copy_before,
		    (unsigned)st->copy_bytes);
	if (early)
		note("%llu stacks end early, at a frame that says why: %llu [stack copy ended] "
		     "(%s), %llu [depth limit], %llu [no unwind "
		     "info: FILE+OFFSET] (code of a file without CFI, such as hand-written "
		     "assembly), %llu [interrupted stack not copied] (a signal handler ran on a "
		     "stack of its own, which is all the copy holds; auto goes on by frame "
		     "pointers where they are kept), %llu [stack not in memory] (a page of the "
		     "stack between a frame and its caller's was not in memory: never touched "
		     "yet, or swapped out)",
		     (unsigned long long)early, (unsigned long long)e[UNWIND_END_COPY], copy_more,
		     (unsigned long long)e[UNWIND_END_DEPTH],
		     (unsigned long long)e[UNWIND_END_NO_INFO],
		     (unsigned long long)e[UNWIND_END_OTHER_STACK],
		     (unsigned long long)e[UNWIND_END_NOT_PRESENT]);
	if (unwind_check)
		note("unwind check: %llu samples, %llu by the fast path, %llu stacks differ",
		     (unsigned long long)st->unwind_check.checked,
		     (unsigned long long)st->unwind_check.fast,
		     (unsigned long long)st->unwind_check.differ);
}

/* Whether pid's program, or the command, is named like a Python. */
static int looks_python(struct proc_registry *procs, pid_t pid, const char *argv0)
{
	const struct proc_map *m = pid ? procs_exe(procs, pid) : NULL;
	const char *path = m && m->path ? m->path : argv0;
	const char *base = path ? strrchr(path, '/') : NULL;

	return path && strstr(base ? base + 1 : path, "python") != NULL;
}

void record_say_python(const struct record_args *a, const struct sampler_stats *st,
		       struct proc_registry *procs, const struct sampler_target *t, size_t n)
{
	const struct py_samples_stats *py = &st->python;

	if (a->event == RECORD_ALLOC)
		return;
	if (!py->processes) {
		int python = 0;
		for (size_t i = 0; i < n && !python; i++)
			python = looks_python(procs, t[i].pid, a->argv ? a->argv[0] : NULL);
		if (python && st->python_err)
			warning("the Python frames of the targets could not be read (%s): their "
				"stacks show the interpreter's C functions only; it needs CAP_BPF "
				"and CAP_PERFMON (or root) and Linux 5.17 or later",
				strerror(-st->python_err));
		else if (python)
			note("no target is a CPython of a version recce reads at sample time "
			     "(3.11 to 3.13): its stacks show the interpreter's C functions");
		return;
	}
	uint64_t shown = py->matched - (py->unplaced < py->matched ? py->unplaced : py->matched);
	note("Python %s: %llu sample%s with Python frames, %llu of threads running no Python "
	     "code",
	     py->version[0] ? py->version : "(version unknown)", (unsigned long long)shown,
	     shown == 1 ? "" : "s", (unsigned long long)py->native);
	if (py->unmatched)
		warning("%llu sample%s of Python processes show%s native frames only: taken "
			"before recce knew the process as a Python (it started or exec'd during "
			"the recording), or their frames were not read%s",
			(unsigned long long)py->unmatched, py->unmatched == 1 ? "" : "s",
			py->unmatched == 1 ? "s" : "",
			py->dropped ? ", the frame ring being full" : "");
	if (py->unplaced)
		warning("%llu sample%s of Python processes show%s native frames only: %s Python "
			"frames did not fit %s native stack (read as a call began or ended)",
			(unsigned long long)py->unplaced, py->unplaced == 1 ? "" : "s",
			py->unplaced == 1 ? "s" : "", py->unplaced == 1 ? "its" : "their",
			py->unplaced == 1 ? "its" : "their");
	if (py->cut)
		note("%llu Python stack%s end%s early: deeper than %d frames, or a frame could "
		     "not be read while it changed",
		     (unsigned long long)py->cut, py->cut == 1 ? "" : "s", py->cut == 1 ? "s" : "",
		     PY_BPF_FRAMES);
	if (py->unread)
		note("%llu Python frame%s shown as [unknown Python code]: the code object "
		     "could not be read (freed, or the process ended, before recce read it)",
		     (unsigned long long)py->unread, py->unread == 1 ? " is" : "s are");
}

uint64_t record_wait_ns(const struct record_args *a)
{
	struct procstat_reader r;
	uint64_t sum = 0, run, wait;

	if (procstat_reader_init(&r, NULL) < 0)
		return 0;
	for (size_t i = 0; i < a->npids; i++)
		if (procstat_read_schedstat(&r, a->pids[i], &run, &wait) == 0)
			sum += wait;
	procstat_reader_release(&r);
	return sum;
}

/* The processes ran (used_ns, by the count of the sampling events, their
 * ended threads' included) but the samples stand for less than half of
 * it (cpu_ns): says so. Returns whether it did. */
static int say_unsampled(const struct record_args *a, uint64_t cpu_ns, uint64_t used_ns)
{
	if (used_ns < 100000000ull || (double)cpu_ns * 2 >= (double)used_ns)
		return 0;
	double period_ms = 1000.0 / (double)a->freq;
	warning("the target%s used %.2f s of CPU while recorded, and %s samples stand for %.2f s: "
		"%s threads that end before their CPU time adds up to a sampling period (%.1f ms "
		"at -F %lld) are never sampled, as the kernel samples each thread by its own CPU "
		"time; %sa higher -F (-F %d samples those of %.0f ms and more) helps",
		a->npids == 1 ? "" : "s", (double)used_ns / 1e9, a->npids == 1 ? "its" : "their",
		(double)cpu_ns / 1e9, a->npids == 1 ? "its" : "their", period_ms, a->freq,
		a->per_thread ? "without --per-thread every CPU is sampled instead, and every "
				"thread with it; or "
			      : "",
		period_ms > 1.5 ? 999 : 9999, period_ms > 1.5 ? 1.0 : 0.1);
	return 1;
}

void record_say_idle(const struct record_args *a, uint64_t cpu_ns, uint64_t used_ns,
		     uint64_t wait_ns, int64_t duration_ns)
{
	if (a->event != RECORD_CPU || a->argv || a->all || a->cgroup || a->ntids)
		return;
	if (say_unsampled(a, cpu_ns, used_ns))
		return;
	/* Below 5% of one CPU a CPU profile is mostly noise. */
	if (duration_ns < 1000000000 || (double)cpu_ns >= 0.05 * (double)duration_ns)
		return;
	/* Runnable is not idle: a thread that waited on a run queue wanted a
	 * CPU the machine did not give it. */
	if ((double)wait_ns >= 0.05 * (double)duration_ns && wait_ns > cpu_ns) {
		note("the target was starved for CPU: it ran %.1f%% of one CPU in %.1f s, and its "
		     "threads waited %.1f s in all for one, as other work held the machine's CPUs; "
		     "its profile is thin, not idle: see who holds them with recce top -a",
		     100.0 * (double)cpu_ns / (double)duration_ns, (double)duration_ns / 1e9,
		     (double)wait_ns / 1e9);
		return;
	}
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
