/*
 * The recording engine (see sampler.h): attach or launch, then the per-CPU
 * rings, the stop descriptor and one pidfd per target in the caller's
 * event loop. The loop wakes when a ring is half full or every half
 * second, so a sampled process costs recce a few wakeups per second, not
 * one per sample.
 */
#include "sampling/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf-events.h"
#include "proc/launch.h"
#include "proc/proc-maps.h"
#include "proc/self.h"
#include "proc/tasks.h"
#include "profile/aggregate.h"
#include "profile/resolve.h"
#include "sampling/alloc-probes.h"
#include "sampling/alloc-samples.h"
#include "sampling/offcpu.h"
#include "sampling/unwind.h"
#include "sampling/waiting.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/progress.h"
#include "util/evloop.h"
#include "util/shell.h"
#include "util/u64map.h"
#include "util/version.h"

#define POLL_MS		  500
#define MAX_RESCANS	  100 /* listings of /proc/PID/task before giving up on a churning target */
#define MAX_CMDLINE	  4096	     /* bytes of a target's command line kept for the profile */
#define TID_FREE	  UINT64_MAX /* tid_task value of a thread that exited */
#define MAX_KERNEL_FRAMES 1024	     /* kernel callchain entries kept in dwarf mode */
#define MAX_UNWIND_FRAMES 512  /* user frames unwound per sample: a bad stack cannot loop us */
#define CHILD_GRACE_MS	  2000 /* between SIGTERM and SIGKILL of the launched command */

struct sampler {
	struct sampler_config cfg;
	struct perf_events *pe;
	struct unwinder *unwinder;
	struct offcpu *offcpu;		   /* with PERF_EVENTS_SWITCHES */
	struct alloc_probes *alloc_probes; /* with PERF_EVENTS_ALLOC, until the end */
	struct alloc_samples *alloc;
	pid_t *attached; /* with it: the threads attach() opened, to look at */
	size_t nattached, attached_cap;
	struct sampler_target *targets;
	size_t ntargets;
	int *pidfds; /* per target, -1 once exited or when pidfds are unsupported */
	int *alive;  /* per target */
	pid_t child; /* the launched command, 0 if none or reaped */
	int exec_failed;
	int signalled; /* the stop descriptor became readable */

	/* Duplicate streams (see sampler.h): which tasks were opened by a
	 * rescan, which were closed, and the first task seen per tid. */
	unsigned char *task_flags; /* per perf task: TASK_RESCUED, TASK_CLOSED */
	size_t task_flags_cap;
	size_t live_rescued;
	int any_closed;
	struct u64map tid_task;

	/* System-wide: pid -> KNOWN_SCANNED or KNOWN_RECORDS; 1 << 32 | tid
	 * once its name was looked for; 2 << 32 | pid once it was sampled. */
	struct u64map known;

	uint64_t *frames; /* scratch: one sample's frames */
	size_t frames_cap;

	struct sampler_stats stats;
	int64_t start_mono, end_mono;
	int64_t deadline; /* of the duration, CLOCK_MONOTONIC; INT64_MAX without */
	int stopping;
	int run_err; /* what stopped the run, when an error did */

	/* The loop the sampler is attached to, until it leaves it. */
	struct evloop *loop;
	void (*done)(void *arg);
	void *done_arg;
};

enum { TASK_RESCUED = 1, TASK_CLOSED = 2 };
enum { KNOWN_SCANNED = 1, KNOWN_RECORDS = 2 };

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
	u64map_init(&s->tid_task);
	u64map_init(&s->known);
	s->ntargets = cfg->system_wide ? 0 : cfg->argv ? 1 : cfg->npids ? cfg->npids : cfg->ntids;
	s->targets = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->targets));
	s->pidfds = malloc((s->ntargets ? s->ntargets : 1) * sizeof(*s->pidfds));
	s->alive = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->alive));
	if (cfg->dwarf) {
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
	if (cfg->dwarf || (events & PERF_EVENTS_SWITCHES)) {
		/* Off-CPU also unwinds the threads found waiting (waiting.h). */
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
	pc.stack_bytes = s->cfg.stack_bytes;
	pc.enable_on_exec = enable_on_exec;
	return perf_events_new(&pc, &s->pe);
}

static int task_flags_set(struct sampler *s, int task, unsigned char flag)
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

static unsigned char task_flags(const struct sampler *s, int task)
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

static void thread_name_from_proc(struct sampler *s, pid_t pid, pid_t tid)
{
	char path[64], comm[32];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	ssize_t n = read_small(path, comm, sizeof(comm));
	if (n <= 0)
		return;
	if (comm[n - 1] == '\n')
		comm[n - 1] = 0;
	aggregate_set_thread(s->cfg.agg, pid, tid, comm);
}

/* A thread whose events were just opened: named, and known to be there
 * from the start. */
static int thread_attached(struct sampler *s, pid_t pid, pid_t tid)
{
	thread_name_from_proc(s, pid, tid);
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
		if (n > 0 && offcpu_waiting(s->offcpu, pid, s->attached[i], frames, (size_t)n) < 0)
			s->stats.dropped++;
	}
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
				if (task_flags_set(s, task, TASK_RESCUED) < 0) {
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
	int attached = 0;

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
		/* The pidfd first: it refers to this process even if the pid
		 * is reused while we attach. */
		s->pidfds[i] = proc_pidfd_open(t->pid);
		if (s->pidfds[i] < 0 && errno == ESRCH) {
			t->err = -ESRCH;
			continue;
		}
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
	}
	return attached ? 0 : -ESRCH;
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
	if (task < 0) {
		launch_cancel(&l); /* the child exits without running the command */
		s->child = 0;
		return task;
	}
	s->pidfds[0] = proc_pidfd_open(l.pid);
	s->alive[0] = 1;
	s->start_mono = time_now_ns(CLOCK_MONOTONIC);
	s->stats.start_ns = time_now_ns(CLOCK_REALTIME);
	if (s->offcpu)
		offcpu_set_start(s->offcpu, s->start_mono);

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

	return s->alloc_probes && alloc_probes_inside(s->alloc_probes, s->cfg.procs, pid, addr);
}

/* A process a target created: its allocators are probed from now (the
 * kernel's links are per process), so its first allocations, before
 * recce read of it, are not sampled. */
static void alloc_follow(struct sampler *s, pid_t pid)
{
	int rc = alloc_probes_attach(s->alloc_probes, s->cfg.procs, s->cfg.sym, pid);

	if (rc > 0)
		s->stats.alloc_followed++;
	else if (rc == -ESRCH)
		s->stats.alloc_ended++;
	else if (rc != -ECANCELED && rc != -ENOENT)
		s->stats.alloc_unfollowed++;
}

static int alloc_start(struct sampler *s)
{
	s->alloc =
	    alloc_samples_new(s->cfg.alloc_interval, s->cfg.agg, s->cfg.inuse, alloc_inside, s);
	if (!s->alloc)
		return -ENOMEM;
	int err = alloc_probes_new(s->cfg.alloc_interval, s->pe, &s->alloc_probes);
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
		s->start_mono = time_now_ns(CLOCK_MONOTONIC);
		s->stats.start_ns = time_now_ns(CLOCK_REALTIME);
		if (s->offcpu)
			offcpu_set_start(s->offcpu, s->start_mono);
		if (s->cfg.events & PERF_EVENTS_ALLOC) {
			err = attach(s);
			if (!err)
				err = alloc_start(s);
		} else if (s->cfg.system_wide) {
			/* A "task" of pid -1: one event per CPU, every process;
			 * or of a cgroup, every process in it. */
			int task = s->cfg.cgroup_fd >= 0
				       ? perf_events_open_cgroup(s->pe, s->cfg.cgroup_fd)
				       : perf_events_open_task(s->pe, -1);
			err = task < 0 ? task : 0;
		} else {
			err = attach(s);
		}
	}
	s->stats.user_only = perf_events_user_only(s->pe);
	return err;
}

int sampler_exec_failed(const struct sampler *s)
{
	return s->exec_failed;
}

/*
 * Whether a sample comes from a second stream on its thread (see
 * sampler.h); closes that stream the first time. Only runs while tasks
 * opened by a rescan exist, so the common case pays nothing.
 */
static int sample_is_duplicate(struct sampler *s, const struct perf_record *rec)
{
	int task = perf_events_id_task(s->pe, rec->id);

	if (task_flags(s, task) & TASK_CLOSED)
		return 1;
	if (!s->live_rescued || task < 0)
		return 0;
	uint64_t first;
	if (!u64map_get(&s->tid_task, rec->tid, &first) || first == TID_FREE ||
	    (task_flags(s, (int)first) & TASK_CLOSED)) {
		u64map_put(&s->tid_task, rec->tid, (uint64_t)task);
		return 0;
	}
	if (first == (uint64_t)task)
		return 0;
	/* Two streams on one thread: close the one opened by a rescan (the
	 * later one if both were). */
	int a = (int)first, b = task;
	int victim = -1;
	if ((task_flags(s, a) & TASK_RESCUED) && (task_flags(s, b) & TASK_RESCUED))
		victim = a > b ? a : b;
	else if (task_flags(s, a) & TASK_RESCUED)
		victim = a;
	else if (task_flags(s, b) & TASK_RESCUED)
		victim = b;
	if (victim < 0)
		return 0;
	perf_events_close_task(s->pe, victim);
	task_flags_set(s, victim, TASK_CLOSED);
	s->any_closed = 1;
	s->live_rescued--;
	int keep = victim == a ? b : a;
	u64map_put(&s->tid_task, rec->tid, (uint64_t)keep);
	return victim == task;
}

/* The frames of a sample, leaf first: its callchain, or in dwarf mode its
 * kernel callchain and the unwound user stack. Sets *nframes. */
static const uint64_t *sample_frames(struct sampler *s, const struct perf_record *rec,
				     size_t *nframes)
{
	const uint64_t *frames = rec->sample.ips;
	size_t n = rec->sample.nr;
	if (s->cfg.dwarf) {
		/* The kernel part of the callchain, then the unwound user part. */
		if (n > MAX_KERNEL_FRAMES)
			n = MAX_KERNEL_FRAMES;
		memcpy(s->frames, rec->sample.ips, n * sizeof(*frames));
		if (rec->sample.abi && rec->sample.regs) {
			s->frames[n++] = (uint64_t)PERF_CONTEXT_USER;
			size_t max = s->frames_cap - n;
			if (max > MAX_UNWIND_FRAMES)
				max = MAX_UNWIND_FRAMES;
			int got = unwinder_unwind(s->unwinder, (pid_t)rec->pid, (pid_t)rec->tid,
						  rec->sample.regs, rec->sample.stack,
						  rec->sample.stack_size, s->frames + n, max);
			if (got > 0)
				n += (size_t)got;
		} else if (!n) {
			s->frames[n++] = rec->sample.ip;
		}
		frames = s->frames;
	} else if (!n) {
		frames = &rec->sample.ip;
		n = 1;
	}
	*nframes = n;
	return frames;
}

/*
 * System-wide: reads pid from /proc the first time a record names it, and
 * then sets *fresh. Returns KNOWN_SCANNED, or KNOWN_RECORDS when it was
 * gone (its records alone tell its mappings).
 */
static int know_process(struct sampler *s, pid_t pid, int *fresh)
{
	uint64_t how;

	*fresh = 0;
	if (u64map_get(&s->known, (uint64_t)pid, &how))
		return (int)how;
	*fresh = 1;
	how = procs_scan(s->cfg.procs, pid) == 0 ? KNOWN_SCANNED : KNOWN_RECORDS;
	u64map_put(&s->known, (uint64_t)pid, how);
	return (int)how;
}

/* System-wide: names a thread from /proc the first time it is sampled,
 * and counts the processes sampled. */
static void know_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	uint64_t tkey = (uint64_t)1 << 32 | (uint32_t)tid, pkey = (uint64_t)2 << 32 | (uint32_t)pid;

	if (u64map_get(&s->known, tkey, NULL))
		return;
	u64map_put(&s->known, tkey, 1);
	if (!u64map_get(&s->known, pkey, NULL) && u64map_put(&s->known, pkey, 1) == 0)
		s->stats.processes++;
	if (!aggregate_thread_name(s->cfg.agg, tid))
		thread_name_from_proc(s, pid, tid);
}

static void handle_sample(struct sampler *s, const struct perf_record *rec)
{
	if (rec->event == PERF_EVENTS_ALLOC) {
		size_t n;
		const uint64_t *frames = sample_frames(s, rec, &n);
		if (!s->alloc ||
		    alloc_samples_add(s->alloc, (pid_t)rec->pid, (pid_t)rec->tid, rec->sample.raw,
				      rec->sample.raw_size, frames, n) < 0)
			s->stats.dropped++;
		return;
	}
	if (s->cfg.system_wide) {
		if (rec->pid == 0) {
			s->stats.idle++;
			return;
		}
		int fresh;
		know_process(s, (pid_t)rec->pid, &fresh);
		know_thread(s, (pid_t)rec->pid, (pid_t)rec->tid);
	}
	if ((s->live_rescued || s->any_closed) && sample_is_duplicate(s, rec)) {
		s->stats.dropped++;
		return;
	}
	size_t n;
	const uint64_t *frames = sample_frames(s, rec, &n);
	if (rec->event == PERF_EVENTS_SWITCHES) {
		if (s->offcpu && offcpu_out(s->offcpu, (pid_t)rec->pid, (pid_t)rec->tid, rec->time,
					    frames, n) < 0)
			s->stats.dropped++;
		return;
	}
	int64_t when = rec->time ? (int64_t)rec->time - s->start_mono : -1;
	if (aggregate_add_at(s->cfg.agg, (pid_t)rec->pid, (pid_t)rec->tid, frames, n,
			     rec->sample.period, when) < 0)
		s->stats.dropped++;
	else
		s->stats.samples++;
}

static void handle_exec(struct sampler *s, pid_t pid)
{
	/* Name the old image's code while its mappings are still known. */
	if (s->cfg.resolver && aggregate_gen_stacks(s->cfg.agg, pid))
		resolver_add(s->cfg.resolver, s->cfg.agg, pid);
	procs_exec(s->cfg.procs, pid);
	aggregate_exec(s->cfg.agg, pid);
	if (s->unwinder)
		unwinder_forget(s->unwinder, pid);
}

static int handle_record(const struct perf_record *rec, void *arg)
{
	struct sampler *s = arg;
	pid_t pid = (pid_t)rec->pid, tid = (pid_t)rec->tid;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		handle_sample(s, rec);
		break;
	case PERF_RECORD_MMAP2:
		/* A process read from /proc just now has this mapping already. */
		if (s->cfg.system_wide) {
			int fresh;
			if (know_process(s, pid, &fresh) == KNOWN_SCANNED && fresh)
				break;
		}
		procs_mmap(s->cfg.procs, pid, rec->mmap.addr, rec->mmap.len, rec->mmap.pgoff,
			   rec->mmap.filename, (int)rec->mmap.prot);
		if (s->unwinder)
			unwinder_maps_changed(s->unwinder, pid);
		break;
	case PERF_RECORD_COMM:
		if (rec->comm.exec)
			handle_exec(s, pid);
		if (pid == tid)
			procs_set_comm(s->cfg.procs, pid, rec->comm.comm);
		aggregate_set_thread(s->cfg.agg, pid, tid, rec->comm.comm);
		break;
	case PERF_RECORD_FORK: {
		const char *name = aggregate_thread_name(s->cfg.agg, (pid_t)rec->task.ptid);
		if (pid != (pid_t)rec->task.ppid) {
			int fresh;
			/* System-wide: the parent's mappings, for a child gone soon. */
			if (s->cfg.system_wide)
				know_process(s, (pid_t)rec->task.ppid, &fresh);
			procs_fork(s->cfg.procs, (pid_t)rec->task.ppid, pid);
			const char *comm = procs_comm(s->cfg.procs, (pid_t)rec->task.ppid);
			char copy[64];
			if (comm) {
				snprintf(copy, sizeof(copy), "%s", comm);
				procs_set_comm(s->cfg.procs, pid, copy);
			}
			if (s->alloc_probes)
				alloc_follow(s, pid);
		}
		aggregate_set_thread(s->cfg.agg, pid, tid, name);
		if (s->offcpu)
			offcpu_new_thread(s->offcpu, pid, tid);
		break;
	}
	case PERF_RECORD_SWITCH:
		if (!s->offcpu)
			break;
		if (!rec->swtch.out)
			offcpu_in(s->offcpu, pid, tid, rec->time);
		else if (rec->swtch.preempt)
			offcpu_preempted(s->offcpu, tid);
		break;
	case PERF_RECORD_EXIT:
		if (s->offcpu)
			offcpu_exit(s->offcpu, tid);
		/* The tid may be reused by a thread with other streams. */
		if (s->live_rescued && u64map_get(&s->tid_task, (uint64_t)tid, NULL))
			u64map_put(&s->tid_task, (uint64_t)tid, TID_FREE);
		if (pid == tid && s->unwinder)
			unwinder_forget(s->unwinder, pid);
		if (pid == tid && s->alloc_probes)
			alloc_probes_forget(s->alloc_probes, pid);
		break;
	case PERF_RECORD_LOST:
		s->stats.lost += rec->lost.lost;
		break;
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		break;
	default:
		break;
	}
	return 0;
}

/* Reaps the launched command if it has exited; returns 1 if it did. */
static int child_wait(struct sampler *s, int options)
{
	int st;

	if (!s->child || waitpid(s->child, &st, options) != s->child)
		return 0;
	s->stats.child_status = st;
	s->stats.child_exited = 1;
	s->child = 0;
	return 1;
}

/* A target's pidfd became readable: that process has exited. */
static void on_target_exit(void *arg, int fd, short revents)
{
	struct sampler *s = arg;

	(void)revents;
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->pidfds[i] != fd)
			continue;
		if (s->targets[i].pid == s->child)
			child_wait(s, WNOHANG);
		s->alive[i] = 0;
		close(s->pidfds[i]);
		s->pidfds[i] = -1;
	}
}

static void on_stop_signal(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	((struct sampler *)arg)->signalled = 1;
}

/* Notes the targets without a pidfd that exited; returns how many targets
 * are still alive. */
static size_t check_targets(struct sampler *s)
{
	size_t alive = 0;

	for (size_t i = 0; i < s->ntargets; i++) {
		if (!s->alive[i])
			continue;
		pid_t pid = s->targets[i].pid;
		int gone;
		if (s->pidfds[i] >= 0)
			gone = 0; /* on_target_exit() will say */
		else if (pid == s->child)
			gone = child_wait(s, WNOHANG);
		else
			gone = kill(pid, 0) < 0 && errno == ESRCH;
		if (gone)
			s->alive[i] = 0;
		else
			alive++;
	}
	return alive;
}

/* Ends the launched command if it outlives its recording. */
static void child_reap(struct sampler *s)
{
	if (!s->child || child_wait(s, WNOHANG))
		return;
	kill(s->child, SIGTERM);
	for (int waited = 0; waited < CHILD_GRACE_MS; waited += 10) {
		if (child_wait(s, WNOHANG))
			return;
		usleep(10000);
	}
	kill(s->child, SIGKILL);
	child_wait(s, 0);
}

/* Leaves the loop: nothing of the sampler's is waited on any more. */
static void leave(struct sampler *s)
{
	if (!s->loop)
		return;
	evloop_remove_arg(s->loop, s);
	s->loop = NULL;
}

/* Sampling is over, for why (an error when negative). */
static void stop(struct sampler *s, int err)
{
	s->stopping = 1;
	s->run_err = err;
	s->end_mono = time_now_ns(CLOCK_MONOTONIC);
	leave(s);
	if (s->done)
		s->done(s->done_arg);
}

/* After every wake of the loop: read the rings, then see whether it is
 * over. */
static void on_wake(void *arg)
{
	struct sampler *s = arg;

	if (s->stopping)
		return;
	int r = perf_events_read(s->pe, handle_record, s);
	if (r < 0) {
		stop(s, r);
		return;
	}
	progress("recording", (uint64_t)(time_now_ns(CLOCK_MONOTONIC) - s->start_mono) / 1000000,
		 s->cfg.duration > 0 ? (uint64_t)(s->cfg.duration * 1e3) : 0, "ms");
	if (s->signalled)
		s->stats.stop = SAMPLER_STOP_SIGNAL;
	else if (!s->cfg.system_wide && !check_targets(s))
		s->stats.stop = SAMPLER_STOP_EXITED;
	else if ((int64_t)time_now_ns(CLOCK_MONOTONIC) >= s->deadline)
		s->stats.stop = SAMPLER_STOP_DURATION;
	if (s->stats.stop != SAMPLER_STOP_NONE)
		stop(s, 0);
}

int sampler_attach(struct sampler *s, struct evloop *loop, void (*done)(void *arg), void *arg)
{
	size_t nrings = perf_events_pollfds(s->pe, NULL, 0);
	int *rings = calloc(nrings ? nrings : 1, sizeof(*rings));
	int ret = 0;

	if (!rings)
		return -ENOMEM;
	s->loop = loop;
	s->done = done;
	s->done_arg = arg;
	s->deadline =
	    s->cfg.duration > 0 ? s->start_mono + (int64_t)(s->cfg.duration * 1e9) : INT64_MAX;
	perf_events_pollfds(s->pe, rings, nrings);
	/* The rings only wake the loop: on_wake() reads them all. */
	for (size_t i = 0; i < nrings && !ret; i++)
		ret = evloop_add(loop, rings[i], 0, NULL, s);
	free(rings);
	if (!ret)
		ret = evloop_add(loop, s->cfg.stop_fd, 0, on_stop_signal, s);
	for (size_t i = 0; i < s->ntargets && !ret; i++)
		if (s->alive[i])
			ret = evloop_add(loop, s->pidfds[i], EVLOOP_ONCE, on_target_exit, s);
	/* A wake every POLL_MS, whatever the rings do, and one at the end. */
	int64_t now = time_now_ns(CLOCK_MONOTONIC);
	if (!ret) {
		int id =
		    evloop_timer_add(loop, now + POLL_MS * 1000000LL, POLL_MS * 1000000LL, NULL, s);
		ret = id < 0 ? id : 0;
	}
	if (!ret && s->deadline != INT64_MAX) {
		int id = evloop_timer_add(loop, s->deadline, 0, NULL, s);
		ret = id < 0 ? id : 0;
	}
	if (!ret)
		ret = evloop_check_add(loop, on_wake, s);
	if (ret)
		leave(s);
	return ret;
}

int sampler_drain(struct sampler *s)
{
	/* Stopped by the loop's owner, not by a condition of its own. */
	if (!s->stopping) {
		s->stopping = 1;
		s->end_mono = time_now_ns(CLOCK_MONOTONIC);
		if (s->stats.stop == SAMPLER_STOP_NONE)
			s->stats.stop = SAMPLER_STOP_SIGNAL;
	}
	leave(s);
	s->stats.duration_ns = s->end_mono - s->start_mono;
	/* The target runs at full speed again before anything else. */
	if (s->alloc_probes)
		alloc_probes_detach(s->alloc_probes);
	if (s->run_err)
		return s->run_err;
	/* What the kernel wrote until now still counts. */
	int r = perf_events_read(s->pe, handle_record, s);
	return r < 0 ? r : 0;
}

int sampler_finish(struct sampler *s)
{
	int ret = 0;

	if (s->offcpu)
		offcpu_finish(s->offcpu, (uint64_t)s->end_mono);
	if (s->alloc && alloc_samples_finish(s->alloc) < 0)
		ret = -ENOMEM;
	child_reap(s);
	return ret;
}

int sampler_run(struct sampler *s)
{
	struct evloop loop;

	evloop_init(&loop);
	int ret = sampler_attach(s, &loop, evloop_stop_done, &loop);
	if (!ret)
		ret = evloop_run(&loop);
	int r = sampler_drain(s);
	evloop_release(&loop);
	ret = ret ? ret : r;
	r = sampler_finish(s);
	return ret ? ret : r;
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
	if (s->alloc_probes)
		st->nallocators = alloc_probes_objects(s->alloc_probes, &st->allocators);
	if (s->pe)
		st->malformed = perf_events_stats(s->pe)->malformed;
	aggregate_get_stats(s->cfg.agg, &as);
	st->threads = as.threads;
	unwinder_check_stats(s->unwinder, &st->unwind_check);
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
	add_comment(p, "allocations", "%llu sampled of about %llu, %llu freed, %llu still in use",
		    (unsigned long long)st->alloc.samples, (unsigned long long)st->alloc.objects,
		    (unsigned long long)st->alloc.frees, (unsigned long long)st->alloc.live);
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
	if (s->cfg.events & PERF_EVENTS_CPU_CLOCK)
		add_comment(p, "rate-requested", "%u Hz", s->cfg.freq);
	if (s->cfg.events & PERF_EVENTS_ALLOC)
		describe_alloc(s, st, p);
	if (s->cfg.events & PERF_EVENTS_SWITCHES)
		add_comment(p, "off-cpu", "%.3f s in %llu switches",
			    seconds_of((int64_t)st->offcpu_ns), (unsigned long long)st->switches);
	add_comment(p, "samples-per-second", "%.1f", sampler_rate(st));
	add_comment(p, "duration", "%.3f s", seconds_of(st->duration_ns));
	add_comment(p, "samples", "%llu", (unsigned long long)st->samples);
	add_comment(p, "lost", "%llu", (unsigned long long)st->lost);
	add_comment(p, "throttled", "%llu", (unsigned long long)st->throttled);
	if (s->cfg.dwarf)
		add_comment(p, "call-graph", "dwarf,%u", (unsigned)s->cfg.stack_bytes);
	else
		add_comment(p, "call-graph", "fp");
	if (st->user_only)
		add_comment(p, "kernel-frames", "none (kernel.perf_event_paranoid)");
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
	child_reap(s);
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
	alloc_samples_free(s->alloc);
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
