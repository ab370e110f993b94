/*
 * perf_event_open(2) sampling events and their ring buffers (see
 * perf-events.h). Everything read from a ring is bounds-checked: a record
 * whose size does not fit what the kernel says it wrote ends the pass over
 * that ring rather than being trusted.
 */
#include "perf/perf-events.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf-ring.h"
#include "perf/perf-sys.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/u64map.h"

#define DEFAULT_RING_PAGES_FP	 64  /* 256 KiB per CPU */
#define DEFAULT_RING_PAGES_DWARF 512 /* 2 MiB per CPU: a sample carries its stack copy */
#define SAMPLE_ID_BYTES		 24  /* pid/tid, time, identifier */

struct perf_task {
	pid_t tid;
	unsigned long flags; /* perf_event_open's: PERF_FLAG_PID_CGROUP for a cgroup's */
	int closed;
	int *fds;      /* one per CPU and event, -1 once closed */
	uint64_t *ids; /* one per CPU and event */
};

struct perf_events {
	struct perf_events_config cfg;
	int *cpus;
	size_t ncpus;
	size_t ring_bytes; /* each ring's data, as asked */
	struct perf_ring *rings;
	struct perf_record *recs; /* one per ring: its peeked record */
	int *outputs;		  /* PERF_EVENTS_ALLOC: one output event per CPU */
	int *cpu_events;	  /* cpu_wide: one cpu-clock sampling event per CPU */
	unsigned kinds[3];	  /* the PERF_EVENTS_* events opened per thread and CPU */
	size_t nkinds;
	struct perf_task *tasks;
	size_t ntasks, tasks_cap;
	struct u64map ids; /* event id -> task index | event << 32 */
	/* id of a sampling event another took over from (a larger stack
	 * copy) -> the time the other began: its records from then on are
	 * the same moments again. */
	struct u64map retired;
	int user_only;
	int bpf_refused; /* the errno of a refused PERF_EVENT_IOC_SET_BPF, negative */
	uint64_t sample_type;
	uint64_t nregs;
	struct perf_events_stats stats;
	uint64_t closed_cpu_ns; /* counted by the cpu-clock events of closed tasks */
	/* The sampling events' read() gives their samples lost beside their
	 * count (PERF_FORMAT_LOST, Linux 6.0; cleared where refused); and
	 * what those of closed tasks had lost. */
	int read_lost;
	int build_ids; /* mmap records carry build-ids (cleared where refused) */
	uint64_t closed_lost;
};

/* An event's read(): its count, then with read_lost its samples lost. */
struct event_read {
	uint64_t value, lost;
};

/* The attributes shared by the ring owners and the sampling events, so
 * that PERF_EVENT_IOC_SET_OUTPUT accepts them (same clock) and every record
 * carries the same sample_id trailer. */
static void attr_common(const struct perf_events *pe, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->sample_type = pe->sample_type;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	/* Wake the reader when an eighth of a ring is full, not per sample:
	 * woken at half, a reader that waits for a CPU (beside a process
	 * making thousands of threads a second, say) lost records where with
	 * seven eighths to go it lost none. The kernel keeps the mark within
	 * the ring actually mapped, which may be smaller than asked. */
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(pe->ring_bytes / 8);
	attr->exclude_hv = 1;
	if (pe->cfg.dwarf) {
		/* The kernel validates these whenever sample_type asks for
		 * them, even on the dummy. */
		attr->sample_regs_user = PERF_EVENTS_REGS_MASK;
		attr->sample_stack_user = pe->cfg.stack_bytes;
	}
}

static int ring_open(struct perf_events *pe, struct perf_ring *r, int cpu, size_t pages)
{
	struct perf_event_attr attr;

	attr_common(pe, &attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	int fd = perf_event_open_fd(&attr, 0, cpu);
	if (fd < 0)
		return -errno;
	/* Halve the ring while the kernel refuses it, down to 8 pages. */
	return perf_ring_map(r, fd, pages, 8);
}

/* perf_event_open() of attr. A kernel before 6.0 knows no
 * PERF_FORMAT_LOST (EINVAL): attr is opened again without it, and no
 * later event asks for it (only the records of losses count them
 * there). The descriptor, or -1 with errno. */
static int open_event(struct perf_events *pe, struct perf_event_attr *attr, pid_t tid, int cpu,
		      unsigned long flags)
{
	int fd = perf_event_open_flags(attr, tid, cpu, flags);

	if (fd < 0 && errno == EINVAL && (attr->read_format & PERF_FORMAT_LOST)) {
		pe->read_lost = 0;
		attr->read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = perf_event_open_flags(attr, tid, cpu, flags);
	}
	return fd;
}

/* The attributes of a CPU's own event of kind, not a thread's: the
 * output events of PERF_EVENTS_ALLOC (their samples carry the
 * program's raw data after the call chain), or the cpu-clock events of
 * cpu_wide, held until they have their program (a sample before would
 * be of any process). */
static void attr_per_cpu(const struct perf_events *pe, unsigned kind, struct perf_event_attr *attr)
{
	attr_common(pe, attr);
	attr->sample_max_stack = pe->cfg.max_stack;
	attr->read_format = pe->read_lost ? PERF_FORMAT_LOST : 0;
	if (kind == PERF_EVENTS_ALLOC) {
		attr->config = PERF_COUNT_SW_BPF_OUTPUT;
		attr->sample_type |= PERF_SAMPLE_RAW;
		attr->sample_period = 1;
		attr->exclude_callchain_user = pe->cfg.dwarf ? 1 : 0;
		attr->exclude_callchain_kernel = 1;
		/* Its own count of what it lost (read_format): a loss as
		 * the recording ends gets no record (the kernel writes one
		 * at the next output). */
	} else {
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		attr->freq = 1;
		attr->sample_freq = pe->cfg.freq;
		attr->disabled = 1;
		attr->exclude_kernel = pe->user_only ? 1 : 0;
		attr->exclude_callchain_user = pe->cfg.dwarf && !pe->cfg.fp_chain ? 1 : 0;
	}
}

/* One event of kind on each CPU, in *fds (an array the caller frees),
 * writing into that CPU's ring, each running the perf_event program
 * prog_fd when it is not -1. A refusal of the kernel's samples falls
 * back to the user's, for cpu-clock. 0, or -errno. */
static int cpu_events_open(struct perf_events *pe, unsigned kind, int prog_fd, int **fds)
{
	int *f = malloc(pe->ncpus * sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < pe->ncpus; i++)
		f[i] = -1;
	*fds = f;
	for (size_t i = 0; i < pe->ncpus; i++) {
		struct perf_event_attr attr;
		uint64_t id;
		int fd;
		for (;;) {
			attr_per_cpu(pe, kind, &attr);
			fd = open_event(pe, &attr, -1, pe->cpus[i], 0);
			if (fd >= 0 || kind != PERF_EVENTS_CPU_CLOCK ||
			    (errno != EACCES && errno != EPERM) || pe->user_only)
				break;
			pe->user_only = 1;
		}
		if (fd < 0)
			return errno == EPERM ? -EACCES : -errno;
		f[i] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, pe->rings[i].fd) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0 ||
		    (prog_fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0))
			return -errno;
		int err = u64map_put(&pe->ids, id, UINT32_MAX | (uint64_t)kind << 32);
		if (err)
			return err;
	}
	return 0;
}

/* Closes and frees what cpu_events_open() made (NULL: nothing). */
static void cpu_events_close(const struct perf_events *pe, int *fds)
{
	for (size_t i = 0; fds && i < pe->ncpus; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

int perf_events_open_cpus(struct perf_events *pe, int prog_fd)
{
	if (!pe->cfg.cpu_wide || pe->cpu_events)
		return -EINVAL;
	int err = cpu_events_open(pe, PERF_EVENTS_CPU_CLOCK, prog_fd, &pe->cpu_events);
	if (err)
		return err;
	for (size_t i = 0; i < pe->ncpus; i++)
		if (ioctl(pe->cpu_events[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

int perf_events_output_fd(const struct perf_events *pe, size_t i, int *cpu)
{
	if (!pe->outputs || i >= pe->ncpus)
		return -1;
	*cpu = pe->cpus[i];
	return pe->outputs[i];
}

int perf_events_new(const struct perf_events_config *cfg, struct perf_events **out)
{
	long long max_stack = 127;
	unsigned events = cfg->events ? cfg->events : PERF_EVENTS_CPU_CLOCK;

	if ((events & PERF_EVENTS_CPU_CLOCK) && !cfg->freq)
		return -EINVAL;
	if (events & ~(unsigned)(PERF_EVENTS_CPU_CLOCK | PERF_EVENTS_SWITCHES | PERF_EVENTS_ALLOC))
		return -EINVAL;
	if (cfg->dwarf && (cfg->stack_bytes < 8 || cfg->stack_bytes > PERF_EVENTS_MAX_STACK_BYTES ||
			   cfg->stack_bytes % 8))
		return -EINVAL;
	struct perf_events *pe = calloc(1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	pe->cfg = *cfg;
	pe->cfg.events = events;
	pe->read_lost = 1;
	pe->build_ids = 1;
	/* The first kind opened carries the mmap, comm and task records. */
	if (events & PERF_EVENTS_CPU_CLOCK)
		pe->kinds[pe->nkinds++] = PERF_EVENTS_CPU_CLOCK;
	if (events & PERF_EVENTS_SWITCHES)
		pe->kinds[pe->nkinds++] = PERF_EVENTS_SWITCHES;
	if (events & PERF_EVENTS_ALLOC)
		pe->kinds[pe->nkinds++] = PERF_EVENTS_ALLOC;
	u64map_init(&pe->ids);
	u64map_init(&pe->retired);
	perf_sysctl_read("/proc/sys/kernel/perf_event_max_stack", &max_stack);
	if (max_stack < 1)
		max_stack = 1;
	if (max_stack > 65535)
		max_stack = 65535;
	if (!pe->cfg.max_stack || pe->cfg.max_stack > max_stack)
		pe->cfg.max_stack = (uint16_t)max_stack;
	pe->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			  PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (cfg->dwarf) {
		pe->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		pe->nregs = (uint64_t)__builtin_popcountll(PERF_EVENTS_REGS_MASK);
	}

	int err = perf_cpus_online(&pe->cpus, &pe->ncpus);
	if (err)
		goto out_free;
	pe->rings = calloc(pe->ncpus, sizeof(*pe->rings));
	pe->recs = calloc(pe->ncpus, sizeof(*pe->recs));
	if (!pe->rings || !pe->recs) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < pe->ncpus; i++)
		perf_ring_init(&pe->rings[i]);
	size_t pages = cfg->ring_pages;
	if (!pages)
		pages = cfg->dwarf ? DEFAULT_RING_PAGES_DWARF : DEFAULT_RING_PAGES_FP;
	if (pages & (pages - 1)) {
		err = -EINVAL;
		goto out_free;
	}
	pe->ring_bytes = pages * (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < pe->ncpus; i++) {
		err = ring_open(pe, &pe->rings[i], pe->cpus[i], pages);
		if (err) {
			if (err == -EPERM)
				err = -EACCES;
			goto out_free;
		}
	}
	if ((events & PERF_EVENTS_ALLOC) &&
	    (err = cpu_events_open(pe, PERF_EVENTS_ALLOC, -1, &pe->outputs)) < 0)
		goto out_free;
	*out = pe;
	return 0;
out_free:
	perf_events_free(pe);
	return err;
}

void perf_events_free(struct perf_events *pe)
{
	if (!pe)
		return;
	for (size_t t = 0; t < pe->ntasks; t++) {
		perf_events_close_task(pe, (int)t);
		free(pe->tasks[t].fds);
		free(pe->tasks[t].ids);
	}
	free(pe->tasks);
	cpu_events_close(pe, pe->outputs);
	cpu_events_close(pe, pe->cpu_events);
	if (pe->rings)
		for (size_t i = 0; i < pe->ncpus; i++)
			perf_ring_release(&pe->rings[i]);
	free(pe->rings);
	free(pe->recs);
	free(pe->cpus);
	u64map_release(&pe->ids);
	u64map_release(&pe->retired);
	free(pe);
}

int perf_events_id_task(const struct perf_events *pe, uint64_t id)
{
	uint64_t task;

	return u64map_get(&pe->ids, id, &task) ? (int)(uint32_t)task : -1;
}

size_t perf_events_ntasks(const struct perf_events *pe)
{
	return pe->ntasks;
}

void perf_events_set_bpf(struct perf_events *pe, int prog_fd)
{
	pe->cfg.bpf_prog_fd = prog_fd;
}

int perf_events_bpf_refused(const struct perf_events *pe)
{
	return pe->bpf_refused;
}

int perf_events_user_only(const struct perf_events *pe)
{
	return pe->user_only;
}

/* The attributes of the event of kind k (the first kind when first). */
static void attr_sampling(const struct perf_events *pe, unsigned kind, int first,
			  struct perf_event_attr *attr)
{
	attr_common(pe, attr);
	if (kind == PERF_EVENTS_CPU_CLOCK) {
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		/* cpu_wide: the thread's CPU time counted, its samples taken
		 * by the events of its CPUs. */
		attr->freq = pe->cfg.cpu_wide ? 0 : 1;
		attr->sample_freq = pe->cfg.cpu_wide ? 0 : pe->cfg.freq;
	} else if (kind == PERF_EVENTS_ALLOC) {
		attr->config = PERF_COUNT_SW_DUMMY; /* the records beside samples only */
	} else {
		/* Every switch out, where the thread stopped; the records of
		 * its switches out and in time how long it stayed off. */
		attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		attr->sample_period = 1;
		attr->context_switch = 1;
	}
	attr->inherit = 1;
	attr->mmap = first;
	attr->mmap2 = first;
	/* The build-id in each mapping's record, read by the kernel as the
	 * file is mapped: a program that ran briefly from a file deleted
	 * right after (a test binary, a build step) is named by it when the
	 * file can no longer be opened, and a path that holds another file
	 * by then is not taken for it. */
	attr->build_id = first && pe->build_ids;
	attr->comm = first;
	attr->comm_exec = first;
	attr->task = first;
	attr->disabled = pe->cfg.enable_on_exec ? 1 : 0;
	attr->enable_on_exec = pe->cfg.enable_on_exec ? 1 : 0;
	attr->exclude_kernel = pe->user_only ? 1 : 0;
	attr->sample_max_stack = pe->cfg.max_stack;
	attr->exclude_callchain_user = pe->cfg.dwarf && !pe->cfg.fp_chain ? 1 : 0;
	attr->read_format = pe->read_lost ? PERF_FORMAT_LOST : 0;
}

/* Opens the event of tid on one CPU, falling back to user-only sampling
 * the first time kernel sampling is refused; held: disabled, for the
 * caller to enable. */
static int open_one(struct perf_events *pe, size_t k, pid_t tid, int cpu, unsigned long flags,
		    int held)
{
	struct perf_event_attr attr;

	for (;;) {
		attr_sampling(pe, pe->kinds[k], k == 0, &attr);
		if (held)
			attr.disabled = 1;
		if (flags & PERF_FLAG_PID_CGROUP)
			attr.inherit = 0; /* the cgroup's tasks are all counted already */
		int fd = open_event(pe, &attr, tid, cpu, flags);
		if (fd >= 0)
			return fd;
		int err = errno;
		if ((err == EACCES || err == EPERM) && !pe->user_only) {
			pe->user_only = 1;
			continue;
		}
		/* Before 5.12: records with inodes, no build-ids. */
		if (err == EINVAL && k == 0 && pe->build_ids) {
			pe->build_ids = 0;
			continue;
		}
		if (err == EPERM)
			err = EACCES;
		return -err;
	}
}

static int task_slot(struct perf_events *pe)
{
	struct perf_task *n = array_reserve(pe->tasks, &pe->tasks_cap, pe->ntasks + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	pe->tasks = n;
	struct perf_task *t = &pe->tasks[pe->ntasks];
	memset(t, 0, sizeof(*t));
	t->fds = malloc(pe->ncpus * pe->nkinds * sizeof(*t->fds));
	t->ids = calloc(pe->ncpus * pe->nkinds, sizeof(*t->ids));
	if (!t->fds || !t->ids) {
		free(t->fds);
		free(t->ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < pe->ncpus * pe->nkinds; i++)
		t->fds[i] = -1;
	return 0;
}

/* Whether a task's event of kind k runs the config's program. */
static int runs_bpf(const struct perf_events *pe, size_t k)
{
	return pe->cfg.bpf_prog_fd > 0 && pe->kinds[k] != PERF_EVENTS_ALLOC &&
	       !(pe->cfg.cpu_wide && pe->kinds[k] == PERF_EVENTS_CPU_CLOCK) && !pe->bpf_refused;
}

/* The event of kind k of tid (flags: perf_event_open's) on the cpu-th CPU,
 * into that CPU's ring, with the config's program where it runs it; held:
 * disabled, for the caller to enable. *fd, -1 until opened, and *id. 0,
 * or -errno (*fd for the caller to close). */
static int open_wired(struct perf_events *pe, size_t k, pid_t tid, size_t cpu, unsigned long flags,
		      int held, int *fd, uint64_t *id)
{
	int bpf = runs_bpf(pe, k);

	*fd = open_one(pe, k, tid, pe->cpus[cpu], flags, held);
	if (*fd < 0) {
		int err = *fd;
		*fd = -1;
		return err;
	}
	if (ioctl(*fd, PERF_EVENT_IOC_SET_OUTPUT, pe->rings[cpu].fd) < 0 ||
	    ioctl(*fd, PERF_EVENT_IOC_ID, id) < 0)
		return -errno;
	if (bpf && ioctl(*fd, PERF_EVENT_IOC_SET_BPF, pe->cfg.bpf_prog_fd) < 0)
		pe->bpf_refused = -errno;
	return 0;
}

/* The events of a thread (pid -1: every one) or a cgroup on every CPU. */
static int open_task(struct perf_events *pe, pid_t tid, unsigned long flags)
{
	int err = task_slot(pe);

	if (err)
		return err;
	struct perf_task *t = &pe->tasks[pe->ntasks];
	t->tid = tid;
	t->flags = flags;
	size_t n = pe->ncpus * pe->nkinds;
	for (size_t i = 0; i < n; i++) {
		size_t cpu = i % pe->ncpus, k = i / pe->ncpus;
		/* An event that runs the program is held until it has it: a
		 * sample before would have no record (its Python frames). */
		int held = runs_bpf(pe, k) && !pe->cfg.enable_on_exec;
		err = open_wired(pe, k, tid, cpu, flags, held, &t->fds[i], &t->ids[i]);
		if (err)
			goto out_close;
		if (held && ioctl(t->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
			err = -errno;
			goto out_close;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t kind = pe->kinds[i / pe->ncpus];
		err = u64map_put(&pe->ids, t->ids[i], pe->ntasks | kind << 32);
		if (err)
			goto out_close;
	}
	return (int)pe->ntasks++;
out_close:
	for (size_t i = 0; i < n; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	free(t->fds);
	free(t->ids);
	return err;
}

int perf_events_open_task(struct perf_events *pe, pid_t tid)
{
	return open_task(pe, tid, 0);
}

int perf_events_open_cgroup(struct perf_events *pe, int cgroup_fd)
{
	return open_task(pe, cgroup_fd, PERF_FLAG_PID_CGROUP);
}

/*
 * Event fresh, opened held, takes over from event old, which goes: fresh
 * starts, then old's counts are kept (its CPU time where counted) and it
 * is closed. Its records from the moment fresh began, read later, are
 * dropped (perf_events_read()): the same moments sampled twice, the same
 * mappings and tasks told twice. Nothing is lost in between.
 */
static int take_over(struct perf_events *pe, int old, int fresh, int counted)
{
	struct event_read v = {0, 0};
	size_t len = pe->read_lost ? sizeof(v) : sizeof(v.value);
	uint64_t id;

	if (ioctl(fresh, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	uint64_t at = time_now_ns(CLOCK_MONOTONIC);
	int err =
	    ioctl(old, PERF_EVENT_IOC_ID, &id) < 0 ? -errno : u64map_put(&pe->retired, id, at);
	if (read(old, &v, len) == (ssize_t)len) {
		pe->closed_lost += v.lost;
		pe->closed_cpu_ns += counted ? v.value : 0;
	}
	close(old);
	return err;
}

/* The system-wide task's cpu-clock events (pid -1 on every CPU, the first
 * kind: they carry the mappings and tasks as well) opened again with the
 * copy pe->cfg.stack_bytes and their program, into fresh (ncpus). */
static int task_events_open(struct perf_events *pe, const struct perf_task *t, int *fresh)
{
	for (size_t i = 0; i < pe->ncpus; i++) {
		uint64_t id;
		int err = open_wired(pe, 0, t->tid, i, t->flags, 1, &fresh[i], &id);
		if (!err)
			err = u64map_put(&pe->ids, id,
					 (uint64_t)(t - pe->tasks) | (uint64_t)PERF_EVENTS_CPU_CLOCK
									 << 32);
		if (err)
			return err;
	}
	return 0;
}

/* The events whose copy grows: the per-CPU events of cpu_wide, or the
 * one task of a system-wide or a cgroup's recording of CPU samples alone
 * (nothing else open). NULL for none; *task: -1 for the former. */
static int *growing_events(struct perf_events *pe, int *task)
{
	*task = -1;
	if (pe->cfg.cpu_wide)
		return pe->cpu_events;
	const struct perf_task *t = &pe->tasks[0];
	int whole = t->tid == -1 && !t->flags;
	int cgroup = t->flags == PERF_FLAG_PID_CGROUP;
	if (pe->ntasks != 1 || t->closed || !(whole || cgroup) || pe->nkinds != 1 ||
	    pe->kinds[0] != PERF_EVENTS_CPU_CLOCK)
		return NULL;
	*task = 0;
	return pe->tasks[0].fds;
}

int perf_events_grow_stack(struct perf_events *pe, uint32_t bytes, int prog_fd)
{
	uint32_t was = pe->cfg.stack_bytes;
	int task, *old = growing_events(pe, &task), *fresh = NULL, err;

	if (!old || !pe->cfg.dwarf || bytes % 8 || bytes <= was ||
	    bytes > PERF_EVENTS_MAX_STACK_BYTES)
		return -EINVAL;
	pe->cfg.stack_bytes = bytes;
	if (task < 0) {
		err = cpu_events_open(pe, PERF_EVENTS_CPU_CLOCK, prog_fd, &fresh);
	} else if (!(fresh = malloc(pe->ncpus * sizeof(*fresh)))) {
		err = -ENOMEM;
	} else {
		for (size_t i = 0; i < pe->ncpus; i++)
			fresh[i] = -1;
		err = task_events_open(pe, &pe->tasks[task], fresh);
	}
	if (err) {
		cpu_events_close(pe, fresh);
		pe->cfg.stack_bytes = was;
		return err;
	}
	/* From here on the copy is the new one, whatever fails: each CPU's
	 * event is the old or the new, and its records say which. */
	for (size_t i = 0; i < pe->ncpus; i++) {
		int e = take_over(pe, old[i], fresh[i], task >= 0);
		if (e < 0 && !err)
			err = e;
		old[i] = fresh[i];
	}
	free(fresh);
	return err;
}

/* What the cpu-clock events of task t counted on every CPU: the CPU
 * time of the thread, and of the threads it made (inherited events fold
 * into it), while sampled. */
static uint64_t task_cpu_ns(const struct perf_events *pe, const struct perf_task *t)
{
	uint64_t sum = 0;
	size_t len = pe->read_lost ? sizeof(struct event_read) : sizeof(uint64_t);
	struct event_read v;

	for (size_t i = 0; i < pe->ncpus * pe->nkinds; i++)
		if (pe->kinds[i / pe->ncpus] == PERF_EVENTS_CPU_CLOCK && t->fds[i] >= 0 &&
		    read(t->fds[i], &v, len) == (ssize_t)len)
			sum += v.value;
	return sum;
}

/* The samples event fd lost, by its read() with PERF_FORMAT_LOST; 0
 * for no event, or one that cannot be read. */
static uint64_t event_lost(int fd)
{
	struct event_read v;

	return fd >= 0 && read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v.lost : 0;
}

/* The samples the events of task t lost (their ring full), by the
 * kernel's count of each event; 0 without PERF_FORMAT_LOST. */
static uint64_t task_lost(const struct perf_events *pe, const struct perf_task *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; pe->read_lost && i < pe->ncpus * pe->nkinds; i++)
		sum += event_lost(t->fds[i]);
	return sum;
}

/* of() summed over the tasks still open. */
static uint64_t open_tasks_sum(const struct perf_events *pe,
			       uint64_t (*of)(const struct perf_events *, const struct perf_task *))
{
	uint64_t sum = 0;

	for (size_t t = 0; t < pe->ntasks; t++)
		if (!pe->tasks[t].closed)
			sum += of(pe, &pe->tasks[t]);
	return sum;
}

uint64_t perf_events_cpu_ns(const struct perf_events *pe)
{
	return pe->closed_cpu_ns + open_tasks_sum(pe, task_cpu_ns);
}

uint64_t perf_events_lost(const struct perf_events *pe)
{
	uint64_t sum = pe->closed_lost + open_tasks_sum(pe, task_lost);

	for (size_t i = 0; pe->read_lost && pe->outputs && i < pe->ncpus; i++)
		sum += event_lost(pe->outputs[i]);
	for (size_t i = 0; pe->read_lost && pe->cpu_events && i < pe->ncpus; i++)
		sum += event_lost(pe->cpu_events[i]);
	return sum;
}

void perf_events_close_task(struct perf_events *pe, int task)
{
	if (task < 0 || (size_t)task >= pe->ntasks || pe->tasks[task].closed)
		return;
	struct perf_task *t = &pe->tasks[task];
	pe->closed_cpu_ns += task_cpu_ns(pe, t);
	pe->closed_lost += task_lost(pe, t);
	for (size_t i = 0; i < pe->ncpus * pe->nkinds; i++) {
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
	t->closed = 1;
}

size_t perf_events_pollfds(const struct perf_events *pe, int *fds, size_t max)
{
	for (size_t i = 0; i < pe->ncpus && i < max; i++)
		fds[i] = pe->rings[i].fd;
	return pe->ncpus;
}

const struct perf_events_stats *perf_events_stats(const struct perf_events *pe)
{
	return &pe->stats;
}

/* A cursor over one record's bytes; every read is checked against end. */
struct cursor {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t cur_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static const void *cur_bytes(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		return NULL;
	}
	const void *v = c->p;
	c->p += n;
	return v;
}

/* A NUL-terminated string within [p, end). */
static const char *bounded_str(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || !memchr(p, 0, (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

static int parse_sample(const struct perf_events *pe, struct cursor *c, struct perf_record *r)
{
	r->id = cur_u64(c);
	r->sample.ip = cur_u64(c);
	uint64_t pidtid = cur_u64(c);
	r->pid = (uint32_t)pidtid;
	r->tid = (uint32_t)(pidtid >> 32);
	r->time = cur_u64(c);
	r->sample.period = cur_u64(c);
	r->sample.nr = cur_u64(c);
	if (c->bad || r->sample.nr > (uint64_t)(c->end - c->p) / 8)
		return -EBADMSG;
	r->sample.ips = cur_bytes(c, r->sample.nr * 8);
	uint64_t v;
	if (pe->outputs && u64map_get(&pe->ids, r->id, &v) &&
	    v == (UINT32_MAX | (uint64_t)PERF_EVENTS_ALLOC << 32)) {
		uint32_t size = 0;
		const void *sz = cur_bytes(c, 4);
		if (sz)
			memcpy(&size, sz, 4);
		r->sample.raw = cur_bytes(c, size);
		r->sample.raw_size = size;
		if (c->bad || (size + 4) % 8)
			return -EBADMSG;
	}
	if (pe->cfg.dwarf) {
		r->sample.abi = cur_u64(c);
		if (r->sample.abi) {
			r->sample.regs = cur_bytes(c, pe->nregs * 8);
			if (!r->sample.regs)
				return -EBADMSG;
		}
		uint64_t size = cur_u64(c);
		r->sample.stack_asked = size;
		if (size) {
			r->sample.stack = cur_bytes(c, size);
			uint64_t dyn = cur_u64(c);
			if (c->bad)
				return -EBADMSG;
			r->sample.stack_size = dyn < size ? dyn : size;
		}
	}
	return c->bad ? -EBADMSG : 0;
}

/* Parses one record of len bytes at p (8-byte aligned) into r. */
static int parse_record(const struct perf_events *pe, const unsigned char *p, size_t len,
			struct perf_record *r)
{
	struct perf_event_header h;
	struct cursor c = {p + sizeof(h), p + len, 0};

	memcpy(&h, p, sizeof(h));
	memset(r, 0, sizeof(*r));
	r->type = h.type;
	r->misc = h.misc;
	if (h.type == PERF_RECORD_SAMPLE)
		return parse_sample(pe, &c, r);

	/* Every other record ends with the sample_id trailer: pid/tid, time,
	 * identifier. */
	if (len < sizeof(h) + SAMPLE_ID_BYTES)
		return -EBADMSG;
	const unsigned char *trailer = p + len - SAMPLE_ID_BYTES;
	uint64_t pidtid;
	memcpy(&pidtid, trailer, 8);
	memcpy(&r->time, trailer + 8, 8);
	memcpy(&r->id, trailer + 16, 8);
	c.end = trailer;

	switch (h.type) {
	case PERF_RECORD_MMAP2: {
		uint64_t ids = cur_u64(&c);
		r->pid = (uint32_t)ids;
		r->tid = (uint32_t)(ids >> 32);
		r->mmap.addr = cur_u64(&c);
		r->mmap.len = cur_u64(&c);
		r->mmap.pgoff = cur_u64(&c);
		const unsigned char *id =
		    cur_bytes(&c, 24); /* maj, min, ino, ino_generation or build id */
		r->mmap.build_id[0] = 0;
		if (id && (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && id[0] && id[0] <= 20)
			hex_of(id + 4, id[0], r->mmap.build_id);
		uint64_t pf = cur_u64(&c);
		r->mmap.prot = (uint32_t)pf;
		r->mmap.flags = (uint32_t)(pf >> 32);
		if (c.bad)
			return -EBADMSG;
		r->mmap.filename = bounded_str(c.p, c.end);
		return r->mmap.filename ? 0 : -EBADMSG;
	}
	case PERF_RECORD_COMM: {
		uint64_t ids = cur_u64(&c);
		r->pid = (uint32_t)ids;
		r->tid = (uint32_t)(ids >> 32);
		if (c.bad)
			return -EBADMSG;
		r->comm.comm = bounded_str(c.p, c.end);
		r->comm.exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		return r->comm.comm ? 0 : -EBADMSG;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		uint64_t a = cur_u64(&c), b = cur_u64(&c);
		r->pid = (uint32_t)a;
		r->task.ppid = (uint32_t)(a >> 32);
		r->tid = (uint32_t)b;
		r->task.ptid = (uint32_t)(b >> 32);
		return c.bad ? -EBADMSG : 0;
	}
	case PERF_RECORD_SWITCH:
		r->pid = (uint32_t)pidtid;
		r->tid = (uint32_t)(pidtid >> 32);
		r->swtch.out = (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		r->swtch.preempt = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
		return 0;
	case PERF_RECORD_LOST:
		cur_u64(&c);
		r->lost.lost = cur_u64(&c);
		r->pid = (uint32_t)pidtid;
		r->tid = (uint32_t)(pidtid >> 32);
		return c.bad ? -EBADMSG : 0;
	default:
		r->pid = (uint32_t)pidtid;
		r->tid = (uint32_t)(pidtid >> 32);
		return 0;
	}
}

/* One pass of perf_events_read(): perf-ring's context. */
struct read_pass {
	struct perf_events *pe;
	int (*fn)(const struct perf_record *rec, void *arg);
	void *arg;
};

/* perf-ring's parse: every well-formed record is handled, in time order. */
static int parse_pass(void *ctx, size_t ring, const unsigned char *p, size_t len, uint64_t *time)
{
	struct read_pass *rp = ctx;
	struct perf_record *r = &rp->pe->recs[ring];

	if (parse_record(rp->pe, p, len, r) < 0)
		return -EBADMSG;
	uint64_t v;
	if (r->type != PERF_RECORD_LOST && u64map_count(&rp->pe->retired) &&
	    u64map_get(&rp->pe->retired, r->id, &v) && r->time >= v) {
		rp->pe->stats.taken_over++;
		return 0;
	}
	if (rp->pe->nkinds > 1 && u64map_get(&rp->pe->ids, r->id, &v))
		r->event = (unsigned)(v >> 32);
	else
		r->event = rp->pe->kinds[0];
	*time = r->time;
	return 1;
}

static int handle_pass(void *ctx, size_t ring)
{
	struct read_pass *rp = ctx;

	return rp->fn(&rp->pe->recs[ring], rp->arg);
}

int perf_events_read(struct perf_events *pe, uint64_t until,
		     int (*fn)(const struct perf_record *rec, void *arg), void *arg)
{
	static const struct perf_ring_ops ops = {parse_pass, handle_pass};
	struct read_pass rp = {pe, fn, arg};
	struct perf_ring_counts counts = {0, 0};

	int count = perf_rings_read(pe->rings, pe->ncpus, until, &ops, &rp, &counts);
	pe->stats.records += (uint64_t)count;
	pe->stats.malformed += counts.malformed;
	pe->stats.wraps += counts.wraps;
	return count;
}
