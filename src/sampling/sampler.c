/*
 * The recording engine (see sampler.h): its events opened on running
 * processes, every thread found, or a command launched with sampling
 * enabled at its exec; its stats and what a recording says about itself.
 * The records go where they belong in sampler-records.c, and the loop's
 * side is sampler-run.c.
 */
#include "sampling/sampler.h"
#include "sampling/sampler-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perf/perf-events.h"
#include "proc/launch.h"
#include "proc/proc-maps.h"
#include "proc/self.h"
#include "proc/procstat.h"
#include "proc/tasks.h"
#include "profile/aggregate.h"
#include "sampling/alloc-fast.h"
#include "sampling/alloc-growth.h"
#include "sampling/alloc-probes.h"
#include "sampling/offcpu.h"
#include "sampling/waiting.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/shell.h"
#include "util/version.h"

#define MAX_RESCANS 100	 /* listings of /proc/PID/task before giving up on a churning target */
#define MAX_CMDLINE 4096 /* bytes of a target's command line kept for the profile */

int sampler_new(const struct sampler_config *cfg, struct sampler **out)
{
	unsigned events = cfg->events ? cfg->events : PERF_EVENTS_CPU_CLOCK;

	if ((!cfg->npids && !cfg->ntids && !cfg->argv && !cfg->system_wide) || !cfg->procs ||
	    !cfg->agg || ((events & PERF_EVENTS_CPU_CLOCK) && !cfg->freq))
		return -EINVAL;
	/* Allocations: the allocators of whole running processes. */
	if ((events & PERF_EVENTS_ALLOC) && (events != PERF_EVENTS_ALLOC || !cfg->npids ||
					     !cfg->inuse || !cfg->sym || !cfg->alloc_interval))
		return -EINVAL;
	struct sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->cfg.events = events;
	s->until_fd = -1;
	s->pick.family_fd = s->pick.fork_fd = s->pick.prog_fd = -1;
	u64map_init(&s->tid_task);
	u64map_init(&s->known);
	s->ntargets = cfg->system_wide ? 0 : cfg->argv ? 1 : cfg->npids ? cfg->npids : cfg->ntids;
	s->targets = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->targets));
	s->pidfds = malloc((s->ntargets ? s->ntargets : 1) * sizeof(*s->pidfds));
	s->alive = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->alive));
	if (cfg->dwarf || cfg->alloc_fast) {
		/* The kernel's part of a callchain, a marker, the unwound part. */
		s->frames_cap = MAX_KERNEL_FRAMES + 1 + MAX_UNWIND_FRAMES;
		s->frames = malloc(s->frames_cap * sizeof(*s->frames));
		if (!s->frames)
			goto fail;
	}
	if (!s->targets || !s->pidfds || !s->alive)
		goto fail;
	for (size_t i = 0; i < s->ntargets; i++)
		s->pidfds[i] = -1;
	if (cfg->dwarf || cfg->alloc_fast || (events & PERF_EVENTS_SWITCHES)) {
		/* Off-CPU also unwinds the threads found waiting (waiting.h),
		 * the in-process allocation recorder's samples are unwound. */
		s->unwinder = unwinder_new(cfg->procs, cfg->unwind_check);
		if (!s->unwinder)
			goto fail;
	}
	proc_raise_fd_limit(); /* one event per thread per CPU */
	*out = s;
	return 0;
fail:
	sampler_free(s);
	return -ENOMEM;
}

static int open_rings(struct sampler *s, int enable_on_exec)
{
	struct perf_events_config pc = {0};

	pc.events = s->cfg.events;
	pc.freq = s->cfg.freq;
	pc.dwarf = s->cfg.dwarf;
	pc.fp_chain = s->cfg.dwarf && s->cfg.fp_after;
	pc.stack_bytes = s->cfg.stack_bytes;
	pc.ring_pages = s->cfg.ring_pages;
	pc.enable_on_exec = enable_on_exec;
	/* Processes sampled per CPU: their family, followed into the
	 * processes they create, and the program that keeps their samples.
	 * CPU samples alone: with switches too (wall), each thread's
	 * samples and waits must add up to the time recorded, which its own
	 * events' periods do. */
	if ((s->cfg.npids || s->cfg.argv) && !s->cfg.ntids && !s->cfg.per_thread &&
	    s->cfg.events == PERF_EVENTS_CPU_CLOCK) {
		s->cpu_wide_err = pick_bpf_new(&s->pick, NULL, 0);
		s->cpu_wide = !s->cpu_wide_err;
	}
	pc.cpu_wide = s->cpu_wide;
	/* The events decide whether their copy can grow
	 * (perf_events_grow_stack()): a refusal keeps it as it is. */
	stack_copy_init(&s->copy, s->cfg.stack_bytes, s->cfg.copy_grows && s->cfg.dwarf);
	stack_copy_set_max(&s->copy, s->cfg.copy_max);
	if (!(s->cfg.events & PERF_EVENTS_ALLOC) && !s->cfg.no_python) {
		s->py_err =
		    py_samples_new(s->cfg.procs, 1000000000ull / (s->cfg.freq ? s->cfg.freq : 1),
				   s->cpu_wide ? s->pick.family_fd : -1, &s->py, NULL, 0);
		/* Every process, or a command: the program on every event (a
		 * CPython may start at any time). Processes: on those of a
		 * CPython only (attach()), so that no other pays for it. */
		if (s->py && (s->cfg.system_wide || s->cfg.argv))
			pc.bpf_prog_fd = py_samples_prog_fd(s->py);
	}
	return perf_events_new(&pc, &s->pe);
}

int sampler_task_flags_set(struct sampler *s, int task, unsigned char flag)
{
	if ((size_t)task >= s->task_flags_cap) {
		size_t old = s->task_flags_cap;
		unsigned char *n =
		    array_reserve(s->task_flags, &s->task_flags_cap, (size_t)task + 1, 1);
		if (!n)
			return -ENOMEM;
		memset(n + old, 0, s->task_flags_cap - old);
		s->task_flags = n;
	}
	s->task_flags[task] |= flag;
	return 0;
}

unsigned char sampler_task_flags(const struct sampler *s, int task)
{
	return task >= 0 && (size_t)task < s->task_flags_cap ? s->task_flags[task] : 0;
}

/* Reads a small /proc file into buf (NUL-terminated); returns its length
 * or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	size_t len = 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

void sampler_thread_name(struct sampler *s, pid_t pid, pid_t tid)
{
	char path[64], comm[32];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	ssize_t n = read_small(path, comm, sizeof(comm));
	if (n <= 0)
		return;
	if (comm[n - 1] == '\n')
		comm[n - 1] = 0;
	/* A CPython's threading.Thread is named as Python names it. */
	int found;
	const char *py =
	    s->py && py_samples_is_python(s->py, pid)
		? py_samples_thread_name(s->py, pid, tid, time_now_ns(CLOCK_MONOTONIC), &found)
		: NULL;
	aggregate_set_thread(s->cfg.agg, pid, tid, py ? py : comm);
}

/* A thread whose events were just opened: named, and known to be there
 * from the start. */
static int thread_attached(struct sampler *s, pid_t pid, pid_t tid)
{
	sampler_thread_name(s, pid, tid);
	if (!s->offcpu)
		return 0;
	pid_t *n = array_reserve(s->attached, &s->attached_cap, s->nattached + 1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->attached = n;
	s->attached[s->nattached++] = tid;
	return offcpu_attached(s->offcpu, pid, tid);
}

/* Off-CPU: the stacks of the threads of pid just attached that wait in a
 * system call, once pid's mappings are known. */
static void find_waiting(struct sampler *s, pid_t pid)
{
	uint64_t frames[1 + MAX_UNWIND_FRAMES];

	for (size_t i = 0; s->offcpu && i < s->nattached; i++) {
		int n = waiting_stack(s->unwinder, pid, s->attached[i], frames,
				      sizeof(frames) / sizeof(frames[0]));
		if (n <= 0)
			continue;
		size_t nf = (size_t)n;
		const uint64_t *f = frames;
		if (s->py)
			f = py_samples_waiting(s->py, pid, s->attached[i], frames, nf, &nf);
		if (offcpu_waiting(s->offcpu, pid, s->attached[i], f, nf) < 0)
			s->stats.dropped++;
	}
	if (s->py)
		py_samples_waiting(s->py, 0, 0, NULL, 0, NULL);
	s->nattached = 0;
}

static char *cmdline_of(pid_t pid)
{
	char path[64];
	char *buf = malloc(MAX_CMDLINE);

	if (!buf)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	ssize_t n = read_small(path, buf, MAX_CMDLINE);
	if (n <= 0) {
		/* A kernel thread or a zombie: fall back to its name. */
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		n = read_small(path, buf, MAX_CMDLINE);
		if (n <= 0) {
			free(buf);
			return NULL;
		}
	}
	while (n > 0 && (buf[n - 1] == 0 || buf[n - 1] == '\n'))
		n--;
	buf[n] = 0;
	/* The words, NUL-separated, quoted as a shell would need them. */
	size_t nw = 1;
	for (ssize_t i = 0; i < n; i++)
		nw += buf[i] == 0;
	const char **words = malloc(nw * sizeof(*words));
	char *line = NULL;
	if (words) {
		nw = 0;
		for (ssize_t i = 0; i <= n; i++)
			if (i == 0 || buf[i - 1] == 0)
				words[nw++] = buf + i;
		line = shell_join(NULL, words, nw);
	}
	free(words);
	free(buf);
	return line;
}

static char *cmdline_join(char *const *argv)
{
	size_t n = 0;

	while (argv[n])
		n++;
	return shell_join(NULL, (const char *const *)argv, n);
}

/*
 * Opens the events of every thread of pid, listing /proc/PID/task until a
 * listing finds no thread without events. Threads of the first listing
 * existed before any event: they cannot have inherited one. Threads found
 * later may have (see sampler.h) and are marked as rescued.
 * Returns the number of threads opened, or -errno.
 */
static int attach_threads(struct sampler *s, pid_t pid)
{
	struct u64map seen;
	struct proc_ids tids;
	int opened = 0, err = 0;

	u64map_init(&seen);
	proc_ids_init(&tids);
	for (int round = 0; round < MAX_RESCANS; round++) {
		ssize_t n = proc_ids_list_tasks(&tids, NULL, pid, SIZE_MAX);
		if (n < 0) {
			err = (int)n;
			break;
		}
		int fresh = 0;
		for (size_t i = 0; i < (size_t)n && !err; i++) {
			pid_t tid = tids.ids[i];
			if (u64map_get(&seen, (uint64_t)tid, NULL))
				continue;
			fresh++;
			if (u64map_put(&seen, (uint64_t)tid, 1) < 0) {
				err = -ENOMEM;
				break;
			}
			int task = perf_events_open_task(s->pe, tid);
			if (task == -ESRCH)
				continue; /* the thread is gone already */
			if (task < 0) {
				err = task;
				break;
			}
			opened++;
			if (round > 0) {
				if (sampler_task_flags_set(s, task, TASK_RESCUED) < 0) {
					err = -ENOMEM;
					break;
				}
				s->live_rescued++;
			}
			if (thread_attached(s, pid, tid) < 0) {
				err = -ENOMEM;
				break;
			}
		}
		if (err || !fresh)
			break;
	}
	proc_ids_release(&tids);
	u64map_release(&seen);
	if (err && err != -ESRCH)
		return err;
	return opened ? opened : -ESRCH;
}

/* Opens the events of one thread of pid (sampler_config's tids). Returns 1
 * or -errno. */
static int attach_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	int task = perf_events_open_task(s->pe, tid);

	if (task < 0)
		return task;
	return thread_attached(s, pid, tid) < 0 ? -ENOMEM : 1;
}

static int attach(struct sampler *s)
{
	int attached = 0, python = 0;

	for (size_t i = 0; i < s->ntargets; i++) {
		struct sampler_target *t = &s->targets[i];
		t->tid = s->cfg.ntids ? s->cfg.tids[i] : 0;
		t->pid = t->tid ? proc_tgid_of(t->tid) : s->cfg.pids[i];
		if (t->pid < 0) {
			t->err = t->pid;
			t->pid = t->tid;
			if (t->err == -ENOMEM)
				return -ENOMEM;
			continue;
		}
		t->cmdline = cmdline_of(t->pid);
		/* A CPython is named to the frame reader before its events
		 * open, so that its first sample has its Python frames. */
		if (s->py && procs_scan(s->cfg.procs, t->pid) == 0)
			py_samples_watch(s->py, t->pid);
		if (s->py)
			perf_events_set_bpf(s->pe, py_samples_is_python(s->py, t->pid)
						       ? py_samples_prog_fd(s->py)
						       : 0);
		/* The pidfd first: it refers to this process even if the pid
		 * is reused while we attach. */
		s->pidfds[i] = proc_pidfd_open(t->pid);
		if (s->pidfds[i] < 0 && errno == ESRCH) {
			t->err = -ESRCH;
			continue;
		}
		if (s->cpu_wide && pick_bpf_add(&s->pick, t->pid) < 0)
			return -ENOMEM;
		int n = t->tid ? attach_thread(s, t->pid, t->tid) : attach_threads(s, t->pid);
		if (n == -EACCES || n == -EMFILE || n == -ENFILE || n == -ENOMEM)
			return n;
		if (n < 0) {
			t->err = n;
			if (s->pidfds[i] >= 0)
				close(s->pidfds[i]);
			s->pidfds[i] = -1;
			continue;
		}
		/* After the events, so that a mapping made meanwhile is seen
		 * by one or the other. */
		procs_scan(s->cfg.procs, t->pid);
		find_waiting(s, t->pid);
		s->alive[i] = 1;
		attached++;
		python |= s->py && py_samples_is_python(s->py, t->pid);
	}
	if (s->py && !python) {
		/* No target is a CPython: the reader goes. */
		py_samples_free(s->py);
		s->py = NULL;
	}
	return attached ? 0 : -ESRCH;
}

int sampler_cpu_prog(const struct sampler *s)
{
	return s->py ? py_samples_prog_fd(s->py) : s->pick.prog_fd;
}

/* The recording starts now: its clock, the profile's start time, and
 * the off-CPU waits counted from then. */
static void clock_starts(struct sampler *s)
{
	s->start_mono = time_now_ns(CLOCK_MONOTONIC);
	s->stats.start_ns = (int64_t)s->start_mono + time_mono_to_real();
	if (s->offcpu)
		offcpu_set_start(s->offcpu, s->start_mono);
}

/* The launched command waits at its gate (proc/launch.h) until its
 * events are open, then execs. */
static int launch(struct sampler *s)
{
	struct sampler_target *t = &s->targets[0];
	struct launch l;

	t->cmdline = cmdline_join(s->cfg.argv);
	int err = launch_held(&l, s->cfg.argv, s->cfg.child_sigmask);
	if (err)
		return err;
	s->child = l.pid;
	t->pid = l.pid;

	int task = perf_events_open_task(s->pe, l.pid);
	if (task >= 0 && s->offcpu && offcpu_attached(s->offcpu, l.pid, l.pid) < 0)
		task = -ENOMEM;
	/* Per CPU, as -p: the events sample from now on, and the samples
	 * until the command's exec are dropped (a task's events start at
	 * its exec). */
	if (task >= 0 && s->cpu_wide) {
		s->before_exec = l.pid;
		task = pick_bpf_add(&s->pick, l.pid);
		if (!task)
			task = perf_events_open_cpus(s->pe, sampler_cpu_prog(s));
	}
	if (task < 0) {
		launch_cancel(&l); /* the child exits without running the command */
		s->child = 0;
		return task;
	}
	s->pidfds[0] = proc_pidfd_open(l.pid);
	s->alive[0] = 1;
	clock_starts(s);

	err = launch_go(&l);
	if (err && !l.pid) {
		s->child = 0;
		s->alive[0] = 0;
		s->exec_failed = 1;
	}
	return err;
}

/* Allocation sampling: the program, and probes on the allocators of
 * every attached target. */
static int alloc_inside(void *ctx, pid_t pid, uint64_t addr)
{
	struct sampler *s = ctx;

	if (s->alloc_fast)
		return alloc_fast_inside(s->alloc_fast, pid, addr);
	return s->alloc_probes && alloc_probes_inside(s->alloc_probes, s->cfg.procs, pid, addr);
}

/* A process a target created: its allocators are probed from now (the
 * kernel's links are per process), so its first allocations, before
 * recce read of it, are not sampled. */
void sampler_alloc_follow(struct sampler *s, pid_t pid)
{
	int rc = alloc_probes_attach(s->alloc_probes, s->cfg.procs, s->cfg.sym, pid);

	if (rc > 0)
		s->stats.alloc_followed++;
	else if (rc == -ESRCH)
		s->stats.alloc_ended++;
	else if (rc != -ECANCELED && rc != -ENOENT)
		s->stats.alloc_unfollowed++;
}

/* In the process: each target's allocator hooked through the library,
 * its samples unwound here from the stack they copy. */
static int alloc_fast_start(struct sampler *s)
{
	int probed = 0, err = 0;

	s->alloc_fast =
	    alloc_fast_new(s->cfg.alloc_interval,
			   s->cfg.stack_bytes ? s->cfg.stack_bytes : RECCE_FAST_ALLOC_STACK);
	if (!s->alloc_fast)
		return -ENOMEM;
	for (size_t i = 0; i < s->ntargets; i++) {
		struct sampler_target *t = &s->targets[i];
		if (t->err)
			continue;
		err = alloc_fast_attach(s->alloc_fast, s->cfg.procs, s->cfg.sym, t->pid);
		int loaded = alloc_fast_info(s->alloc_fast)->failure == FAST_OK;
		if ((err == -ENOENT || err == -ESRCH) && loaded) {
			t->err = err;
			s->alive[i] = 0;
			continue;
		}
		if (err < 0) {
			t->err = err;
			return err;
		}
		probed++;
	}
	return probed ? 0 : -ENOENT;
}

static int alloc_start(struct sampler *s)
{
	s->alloc =
	    alloc_samples_new(s->cfg.alloc_interval, s->cfg.agg, s->cfg.inuse, alloc_inside, s);
	if (!s->alloc)
		return -ENOMEM;
	if (s->cfg.growing &&
	    !(s->growth = alloc_growth_new(s->cfg.growth_every_ns, s->cfg.growing)))
		return -ENOMEM;
	if (s->cfg.alloc_fast)
		return alloc_fast_start(s);
	int older =
	    s->cfg.alloc_older < ALLOC_BPF_SESSIONS ? s->cfg.alloc_older : ALLOC_BPF_SESSIONS;
	int err =
	    alloc_probes_new(s->cfg.alloc_interval, s->pe,
			     (enum alloc_bpf_mode)(ALLOC_BPF_SESSIONS - older), &s->alloc_probes);
	if (err)
		return err;
	int probed = 0;
	for (size_t i = 0; i < s->ntargets; i++) {
		struct sampler_target *t = &s->targets[i];
		if (t->err)
			continue;
		err = alloc_probes_attach(s->alloc_probes, s->cfg.procs, s->cfg.sym, t->pid);
		if (err == -ENOENT || err == -ESRCH) {
			t->err = err;
			s->alive[i] = 0;
			continue;
		}
		if (err < 0)
			return err;
		probed++;
	}
	return probed ? 0 : -ENOENT;
}

/* System-wide: a process read from /proc for the frame reader is known. */
static void scanned_python(void *arg, pid_t pid)
{
	struct sampler *s = arg;

	u64map_put(&s->known, (uint64_t)pid, KNOWN_SCANNED);
}

/* System-wide, once the events are on: every process running is noted
 * (proc-maps.h), so that one that ends before its first sample is read
 * is named all the same. What cannot be listed is only read later. */
static int note_running(struct sampler *s)
{
	struct proc_ids all;

	proc_ids_init(&all);
	ssize_t n = proc_ids_list_dir(&all, "/proc", PROCSTAT_MAX_TASKS);
	for (ssize_t i = 0; i < n; i++)
		if (procs_note(s->cfg.procs, all.ids[i]) == -ENOMEM) {
			proc_ids_release(&all);
			return -ENOMEM;
		}
	proc_ids_release(&all);
	return 0;
}

int sampler_start(struct sampler *s)
{
	int err = open_rings(s, s->cfg.argv != NULL);

	if (err)
		return err;
	if (s->cfg.events & PERF_EVENTS_SWITCHES) {
		s->offcpu = offcpu_new(s->cfg.agg);
		if (!s->offcpu)
			return -ENOMEM;
	}
	s->stats.user_only = 0;
	if (s->cfg.argv)
		err = launch(s);
	else {
		clock_starts(s);
		if (s->cfg.events & PERF_EVENTS_ALLOC) {
			err = attach(s);
			if (!err)
				err = alloc_start(s);
			/* Hooking the allocators can take seconds (a library
			 * read and injected, the target's threads stopped, on a
			 * slow or emulated machine): -d counts from when the
			 * allocations are sampled. */
			clock_starts(s);
		} else if (s->cfg.system_wide) {
			if (s->py)
				py_samples_watch_named(s->py, scanned_python, s);
			/* A "task" of pid -1: one event per CPU, every process;
			 * or of a cgroup, every process in it. */
			int task = s->cfg.cgroup_fd >= 0
				       ? perf_events_open_cgroup(s->pe, s->cfg.cgroup_fd)
				       : perf_events_open_task(s->pe, -1);
			err = task < 0 ? task : note_running(s);
		} else {
			err = attach(s);
			/* The Python frame program keeps the targets' samples
			 * too, when one is a CPython. */
			if (!err && s->cpu_wide)
				err = perf_events_open_cpus(s->pe, sampler_cpu_prog(s));
			/* With switches (offcpu, wall), each thread is watched
			 * from when all the events are on: one that ran while
			 * recce attached (a tenth of a second on a busy machine)
			 * was neither sampled nor seen to switch before. */
			if (!err && s->offcpu)
				clock_starts(s);
		}
	}
	s->stats.user_only = perf_events_user_only(s->pe);
	if (s->py && perf_events_bpf_refused(s->pe)) {
		s->py_err = perf_events_bpf_refused(s->pe);
		py_samples_free(s->py);
		s->py = NULL;
	}
	return err;
}

const struct fast_set_info *sampler_alloc_fast_info(const struct sampler *s)
{
	return s->alloc_fast ? alloc_fast_info(s->alloc_fast) : NULL;
}

const char *sampler_alloc_fast_refused(const struct sampler *s, const char **why)
{
	const char *name = NULL;

	*why = NULL;
	if (s->alloc_fast && alloc_fast_refused(s->alloc_fast, &name, why))
		return name;
	return NULL;
}

int sampler_exec_failed(const struct sampler *s)
{
	return s->exec_failed;
}

void sampler_trim(struct sampler *s, int files_closed)
{
	if (u64map_count(&s->known) > SAMPLER_KNOWN_MAX) {
		u64map_release(&s->known);
		u64map_init(&s->known);
	}
	if (files_closed && s->unwinder)
		unwinder_files_closed(s->unwinder);
}

void sampler_set_resolver(struct sampler *s, struct resolver *r)
{
	s->cfg.resolver = r;
}

size_t sampler_targets(const struct sampler *s, const struct sampler_target **targets)
{
	*targets = s->targets;
	return s->ntargets;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st)
{
	struct aggregate_stats as;

	*st = s->stats;
	if (s->offcpu) {
		struct offcpu_stats os;
		offcpu_get_stats(s->offcpu, &os);
		st->switches = os.switches;
		st->offcpu_ns = os.ns;
		st->samples += os.switches;
		st->dropped += os.dropped;
	}
	if (s->alloc) {
		alloc_samples_get_stats(s->alloc, &st->alloc);
		st->samples = st->alloc.samples;
	}
	if (s->alloc_fast) {
		st->nallocators = alloc_fast_objects(s->alloc_fast, &st->allocators);
		st->alloc_fast = 1;
		alloc_fast_stats(s->alloc_fast, &st->fast);
	}
	if (s->alloc_probes) {
		st->nallocators = alloc_probes_objects(s->alloc_probes, &st->allocators);
		st->alloc_mode = alloc_probes_mode(s->alloc_probes);
	}
	if (s->pe)
		st->malformed = perf_events_stats(s->pe)->malformed;
	if (s->py)
		py_samples_get_stats(s->py, &st->python);
	st->python_err = s->py_err;
	st->cpu_wide = s->cpu_wide;
	st->cpu_wide_err = s->cpu_wide_err;
	aggregate_get_stats(s->cfg.agg, &as);
	st->threads = as.threads;
	unwinder_check_stats(s->unwinder, &st->unwind_check);
	unwinder_end_counts(s->unwinder, st->unwind_ends);
	st->copy_wanted = unwinder_copy_wanted(s->unwinder);
	st->copy_bytes = s->copy.now;
	stack_copy_grew(&s->copy, &st->copy_before, &st->copy_cut_before);
}

static void add_comment(struct profile *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void add_comment(struct profile *p, const char *key, const char *fmt, ...)
{
	char value[4096], line[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s", key, value);
	profile_add_comment(p, line);
}

static double seconds_of(int64_t ns)
{
	return (double)ns / 1e9;
}

double sampler_rate(const struct sampler_stats *st)
{
	double secs = seconds_of(st->duration_ns);

	return secs > 0 ? (double)st->samples / secs : 0;
}

static void describe_alloc(const struct sampler *s, const struct sampler_stats *st,
			   struct profile *p)
{
	add_comment(p, "event", "alloc");
	add_comment(p, "alloc-interval", "%llu bytes", (unsigned long long)s->cfg.alloc_interval);
	for (size_t i = 0; i < st->nallocators; i++)
		add_comment(p, "allocator", "%s", st->allocators[i]);
	add_comment(p, "alloc-probes", "%s",
		    st->alloc_fast			   ? "in-process trampolines (--fast)"
		    : st->alloc_mode == ALLOC_BPF_SESSIONS ? "uprobe sessions"
		    : st->alloc_mode == ALLOC_BPF_LINKS
			? "entry and return probes (no uprobe sessions)"
			: "entry and return perf uprobe events (no uprobe_multi links)");
	if (st->growth_points)
		add_comment(
		    p, "growing", "%d stacks only grew in use over %zu snapshots %.0f s apart",
		    st->growing_stacks, st->growth_points, (double)st->growth_every_ns / 1e9);
	add_comment(p, "allocations",
		    "%llu sampled of about %llu, %llu freed, %llu still in use, %llu not followed",
		    (unsigned long long)st->alloc.samples, (unsigned long long)st->alloc.objects,
		    (unsigned long long)st->alloc.frees, (unsigned long long)st->alloc.live,
		    (unsigned long long)st->alloc.unfollowed);
}

void sampler_describe(const struct sampler *s, const struct sampler_stats *st,
		      const struct sampler_info *info, struct profile *p)
{
	static const char *const stops[] = {"", "duration", "signal", "targets exited"};
	const struct sampler_target *t;
	size_t n = sampler_targets(s, &t);

	if (s->cfg.system_wide && s->cfg.cgroup_fd >= 0)
		add_comment(p, "target", "every process of a cgroup, %zu of them sampled",
			    st->processes);
	else if (s->cfg.system_wide)
		add_comment(p, "target", "every process (system-wide), %zu of them sampled",
			    st->processes);
	for (size_t i = 0; i < n; i++) {
		add_comment(p, "pid", "%d", (int)t[i].pid);
		if (t[i].tid)
			add_comment(p, "tid", "%d", (int)t[i].tid);
		if (t[i].cmdline)
			add_comment(p, "command", "%s", t[i].cmdline);
	}
	if (info->invocation)
		add_comment(p, "recorded-by", "%s (recce %s)", info->invocation, RECCE_VERSION);
	if (s->cfg.events & PERF_EVENTS_SWITCHES)
		add_comment(p, "event", "%s",
			    s->cfg.events & PERF_EVENTS_CPU_CLOCK ? "wall" : "offcpu");
	if (s->cfg.events & PERF_EVENTS_CPU_CLOCK) {
		add_comment(p, "rate-requested", "%u Hz", s->cfg.freq);
		add_comment(p, "sampled", "%s",
			    s->cfg.system_wide || st->cpu_wide ? "per CPU"
							       : "per thread, by its own CPU time");
	}
	if (s->cfg.events & PERF_EVENTS_ALLOC)
		describe_alloc(s, st, p);
	if (s->cfg.events & PERF_EVENTS_SWITCHES)
		add_comment(p, "off-cpu", "%.3f s in %llu switches",
			    seconds_of((int64_t)st->offcpu_ns), (unsigned long long)st->switches);
	add_comment(p, "samples-per-second", "%.1f", sampler_rate(st));
	add_comment(p, "duration", "%.3f s", seconds_of(st->duration_ns));
	add_comment(p, "samples", "%llu", (unsigned long long)st->samples);
	if (st->cpu_ns)
		add_comment(p, "cpu-time", "%.3f s on a CPU while sampled", seconds_of(st->cpu_ns));
	add_comment(p, "records-lost", "%llu", (unsigned long long)st->lost);
	add_comment(p, "throttled", "%llu", (unsigned long long)st->throttled);
	if (s->cfg.dwarf)
		add_comment(p, "call-graph", "%s,%u", s->cfg.fp_after ? "auto" : "dwarf",
			    (unsigned)st->copy_bytes);
	else
		add_comment(p, "call-graph", "fp");
	if (s->cfg.dwarf && st->copy_bytes != s->cfg.stack_bytes)
		add_comment(p, "stack-copy-grew",
			    "from %u bytes: %llu samples taken with smaller copies, %llu of them "
			    "cut where the copy ended",
			    (unsigned)s->cfg.stack_bytes, (unsigned long long)st->copy_before,
			    (unsigned long long)st->copy_cut_before);
	if (s->cfg.dwarf)
		add_comment(
		    p, "stacks-ended-early",
		    "%llu where the stack copy ended, %llu at the depth limit, %llu in code "
		    "without unwind information, %llu below a signal handler's own stack, "
		    "%llu at a stack page not in memory",
		    (unsigned long long)st->unwind_ends[UNWIND_END_COPY],
		    (unsigned long long)st->unwind_ends[UNWIND_END_DEPTH],
		    (unsigned long long)st->unwind_ends[UNWIND_END_NO_INFO],
		    (unsigned long long)st->unwind_ends[UNWIND_END_OTHER_STACK],
		    (unsigned long long)st->unwind_ends[UNWIND_END_NOT_PRESENT]);
	if (st->user_only)
		add_comment(p, "kernel-frames", "none (kernel.perf_event_paranoid)");
	if (st->python.processes)
		add_comment(
		    p, "python",
		    "%s (%zu process%s): %llu samples with Python frames, %llu in "
		    "threads running no Python code, %llu without them (not read), %llu "
		    "shown without them (they did not fit the native stack)",
		    st->python.version, st->python.processes, st->python.processes == 1 ? "" : "es",
		    (unsigned long long)(st->python.matched - st->python.unplaced),
		    (unsigned long long)st->python.native, (unsigned long long)st->python.unmatched,
		    (unsigned long long)st->python.unplaced);
	add_comment(p, "stopped-by", "%s", stops[st->stop]);
	if (info->timeline)
		add_comment(p, "timeline", "%llu samples in time order",
			    (unsigned long long)info->timeline_kept);
	p->time_nanos = st->start_ns;
	p->duration_nanos = st->duration_ns;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	perf_events_free(s->pe);
	sampler_child_reap(s);
	if (s->pidfds)
		for (size_t i = 0; i < s->ntargets; i++)
			if (s->pidfds[i] >= 0)
				close(s->pidfds[i]);
	if (s->targets)
		for (size_t i = 0; i < s->ntargets; i++)
			free(s->targets[i].cmdline);
	unwinder_free(s->unwinder);
	offcpu_free(s->offcpu);
	alloc_probes_free(s->alloc_probes);
	alloc_fast_free(s->alloc_fast);
	alloc_growth_free(s->growth);
	alloc_samples_free(s->alloc);
	py_samples_free(s->py);
	pick_bpf_release(&s->pick);
	free(s->attached);
	u64map_release(&s->tid_task);
	u64map_release(&s->known);
	free(s->task_flags);
	free(s->targets);
	free(s->pidfds);
	free(s->alive);
	free(s->frames);
	free(s);
}
