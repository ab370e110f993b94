/*
 * The sampler's records (see sampler-internal.h): samples to the
 * aggregate (after the duplicate-stream check, through the DWARF
 * unwinder in dwarf mode, to off-CPU time for switches), mappings, forks,
 * execs and names to the process registry, thread names to the
 * aggregate, allocations to their samples.
 */
#include "sampling/sampler-internal.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "perf/alloc-format.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "proc/unwind.h"
#include "profile/aggregate.h"
#include "profile/resolve.h"
#include "sampling/alloc-fast.h"
#include "sampling/alloc-probes.h"
#include "sampling/offcpu.h"
#include "util/clock.h"

#define TID_FREE      UINT64_MAX /* tid_task value of a thread that exited */
#define MAX_FP_FRAMES 256	 /* a fast sample's frame-pointer walk, at most */
#define USER_END      0x0000800000000000ULL /* x86-64 user addresses lie below */

/*
 * Whether a sample comes from a second stream on its thread (see
 * sampler.h); closes that stream the first time. Only runs while tasks
 * opened by a rescan exist, so the common case pays nothing.
 */
static int sample_is_duplicate(struct sampler *s, const struct perf_record *rec)
{
	int task = perf_events_id_task(s->pe, rec->id);

	if (sampler_task_flags(s, task) & TASK_CLOSED)
		return 1;
	if (!s->live_rescued || task < 0)
		return 0;
	uint64_t first;
	if (!u64map_get(&s->tid_task, rec->tid, &first) || first == TID_FREE ||
	    (sampler_task_flags(s, (int)first) & TASK_CLOSED)) {
		u64map_put(&s->tid_task, rec->tid, (uint64_t)task);
		return 0;
	}
	if (first == (uint64_t)task)
		return 0;
	/* Two streams on one thread: close the one opened by a rescan (the
	 * later one if both were). */
	int a = (int)first, b = task;
	int victim = -1;
	if ((sampler_task_flags(s, a) & TASK_RESCUED) && (sampler_task_flags(s, b) & TASK_RESCUED))
		victim = a > b ? a : b;
	else if (sampler_task_flags(s, a) & TASK_RESCUED)
		victim = a;
	else if (sampler_task_flags(s, b) & TASK_RESCUED)
		victim = b;
	if (victim < 0)
		return 0;
	perf_events_close_task(s->pe, victim);
	sampler_task_flags_set(s, victim, TASK_CLOSED);
	s->any_closed = 1;
	s->live_rescued--;
	int keep = victim == a ? b : a;
	u64map_put(&s->tid_task, rec->tid, (uint64_t)keep);
	return victim == task;
}

/* The frames of a sample, leaf first: its callchain, or in dwarf mode its
 * kernel callchain and the unwound user stack (auto: then the rest of the
 * frame-pointer walk). Sets *nframes. */
static const uint64_t *sample_frames(struct sampler *s, const struct perf_record *rec,
				     size_t *nframes)
{
	if (s->cfg.dwarf) {
		struct unwind_sample smp = {
		    .pid = (pid_t)rec->pid,
		    .tid = (pid_t)rec->tid,
		    .ip = rec->sample.ip,
		    .ips = rec->sample.ips,
		    .nips = rec->sample.nr,
		    .regs = rec->sample.abi ? rec->sample.regs : NULL,
		    .stack = rec->sample.stack,
		    .stack_len = rec->sample.stack_size,
		    .mark_end = 1,
		    .stack_asked = rec->sample.stack_asked,
		};
		*nframes = unwinder_sample(s->unwinder, &smp, s->cfg.fp_after, MAX_KERNEL_FRAMES,
					   MAX_UNWIND_FRAMES, s->frames, s->frames_cap);
		stack_copy_seen(&s->copy, rec->sample.stack_asked,
				unwind_cut_at_copy(s->frames, *nframes));
		return s->frames;
	}
	if (!rec->sample.nr) {
		*nframes = 1;
		return &rec->sample.ip;
	}
	*nframes = rec->sample.nr;
	return rec->sample.ips;
}

/* Whether pid's exec is over, by a sample of it taken after the exec's
 * record: its user code is in a mapping of the new program. Until the
 * exec sets its registers, they are those of the program it replaced
 * (recce's code, for the launched command), whose mappings are gone. */
static int exec_over(struct sampler *s, pid_t pid, const uint64_t *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (frames[i] < USER_END)
			return procs_find(s->cfg.procs, pid, frames[i]) != NULL;
	return 0;
}

/* Where pid is among the processes in the midst of an exec;
 * s->nmid_exec when it is not. */
static size_t mid_exec_find(const struct sampler *s, pid_t pid)
{
	size_t i = 0;

	while (i < s->nmid_exec && s->mid_exec[i] != pid)
		i++;
	return i;
}

/* Forgets that pid is in the midst of an exec. */
static void mid_exec_end(struct sampler *s, pid_t pid)
{
	size_t i = mid_exec_find(s, pid);

	if (i == s->nmid_exec)
		return;
	memmove(&s->mid_exec[i], &s->mid_exec[i + 1],
		(s->nmid_exec - i - 1) * sizeof(s->mid_exec[0]));
	s->nmid_exec--;
}

/* pid's exec has begun (its record): until its new program runs. */
static void mid_exec_begin(struct sampler *s, pid_t pid)
{
	mid_exec_end(s, pid);
	if (s->nmid_exec == SAMPLER_MID_EXECS)
		mid_exec_end(s, s->mid_exec[0]);
	s->mid_exec[s->nmid_exec++] = pid;
}

/*
 * Between a process's exec record and its new program's first
 * instruction, the exec's kernel code runs with the user registers of
 * the program it replaced, whose mappings are gone: a sample's user part
 * would be [unknown]. Such a sample keeps its kernel frames alone (*n
 * cut), and the launched command's (its samples begin at its exec) is
 * dropped: returns 0 for that.
 */
static int past_exec(struct sampler *s, pid_t pid, const uint64_t *frames, size_t *n)
{
	if (mid_exec_find(s, pid) == s->nmid_exec)
		return 1;
	if (exec_over(s, pid, frames, *n)) {
		mid_exec_end(s, pid);
		if (pid == s->before_exec)
			s->before_exec = 0;
		return 1;
	}
	if (pid == s->before_exec)
		return 0;
	size_t k = 0;
	while (k < *n && frames[k] >= USER_END)
		k++;
	*n = k;
	return 1;
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
		sampler_thread_name(s, pid, tid);
}

/* A CPython's thread named by its Python name, at its samples until it
 * is found among the Python threads (it runs Python by then; a thread
 * named when it was created, or attached, may not have yet), or for
 * PY_NAME_NS after its first (a C thread, which never is). */
#define PY_NAME_NS   2000000000ull
#define PY_NAME_DONE UINT64_MAX
static void name_python_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	uint64_t key = (uint64_t)3 << 32 | (uint32_t)tid, first = 0;
	int found;

	if ((u64map_get(&s->known, key, &first) && first == PY_NAME_DONE) ||
	    !py_samples_is_python(s->py, pid))
		return;
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);
	const char *name = py_samples_thread_name(s->py, pid, tid, now, &found);
	u64map_put(&s->known, key,
		   found || (first && now - first > PY_NAME_NS) ? PY_NAME_DONE
		   : first					? first
								: now);
	if (name)
		aggregate_set_thread(s->cfg.agg, pid, tid, name);
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
	if (rec->pid && (pid_t)rec->pid == s->before_exec && !s->exec_begun)
		return; /* recce's own code, launching the command */
	if ((s->live_rescued || s->any_closed) && sample_is_duplicate(s, rec)) {
		s->stats.dropped++;
		return;
	}
	size_t n;
	const uint64_t *frames = sample_frames(s, rec, &n);
	if (s->nmid_exec && !past_exec(s, (pid_t)rec->pid, frames, &n))
		return;
	if (s->py) {
		frames = py_samples_stack(s->py, (pid_t)rec->pid, (pid_t)rec->tid, rec->time,
					  frames, n, &n);
		name_python_thread(s, (pid_t)rec->pid, (pid_t)rec->tid);
	}
	if (rec->event == PERF_EVENTS_SWITCHES) {
		if (s->offcpu && offcpu_out(s->offcpu, (pid_t)rec->pid, (pid_t)rec->tid, rec->time,
					    frames, n) < 0)
			s->stats.dropped++;
		return;
	}
	int64_t when = rec->time ? (int64_t)rec->time - s->start_mono : -1;
	/* With switches, time counts from the start (sampler.c): a sample
	 * before it is of time before it. */
	if (s->offcpu && when < 0 && rec->time)
		return;
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
	if (s->py)
		py_samples_exec(s->py, pid);
	if (s->unwinder)
		unwinder_forget(s->unwinder, pid);
}

int sampler_handle_record(const struct perf_record *rec, void *arg)
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
			   rec->mmap.filename, (int)rec->mmap.prot, rec->mmap.build_id);
		if (s->unwinder)
			unwinder_maps_changed(s->unwinder, pid);
		break;
	case PERF_RECORD_COMM:
		if (rec->comm.exec && pid == s->before_exec)
			s->exec_begun = 1;
		if (rec->comm.exec && pid == tid)
			mid_exec_begin(s, pid);
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
				sampler_alloc_follow(s, pid);
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
		if (s->py) {
			py_samples_thread_exit(s->py, tid);
			/* A thread that reuses the id is named afresh. */
			u64map_put(&s->known, (uint64_t)3 << 32 | (uint32_t)tid, 0);
		}
		/* The tid may be reused by a thread with other streams. */
		if (s->live_rescued && u64map_get(&s->tid_task, (uint64_t)tid, NULL))
			u64map_put(&s->tid_task, (uint64_t)tid, TID_FREE);
		if (pid == tid && s->unwinder)
			unwinder_forget(s->unwinder, pid);
		if (pid == tid && s->nmid_exec)
			mid_exec_end(s, pid);
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

/* The frame-pointer walk of a sample's stack copy, as the kernel takes
 * it: PERF_CONTEXT_USER, the instruction pointer, then the return address
 * of each frame the chain from bp reaches inside the copy. Into ips (cap
 * entries); returns the count. */
static size_t copy_fp_walk(const struct fast_alloc_event *e, uint64_t *ips, size_t cap)
{
	if (cap < 2)
		return 0;
	ips[0] = (uint64_t)PERF_CONTEXT_USER;
	ips[1] = e->regs[8];
	return 2 + unwind_copy_fp(e->regs[6], e->regs[7], e->stack, e->stack_len, ips + 2, cap - 2,
				  NULL);
}

int sampler_handle_fast_alloc(const struct fast_alloc_event *e, void *arg)
{
	struct sampler *s = arg;
	struct alloc_raw raw = {e->event, e->value, e->caller, 0};
	uint64_t ips[MAX_FP_FRAMES];
	size_t n = 0;

	/* A result not seen, or one whose free will not be: not in use. */
	if (e->event == ALLOC_EV_RETURN &&
	    (e->flags & (RECCE_FAST_ALLOC_UNKNOWN | RECCE_FAST_ALLOC_UNTRACKED)))
		raw.value = 0;
	/* The stack unwound from the copy, and where that stops short (JIT
	 * code without unwind information: V8's, a JVM's), the frame
	 * pointers' chain after it, as for a perf sample in auto mode. */
	if (e->event == ALLOC_EV_SAMPLE && s->unwinder && s->frames_cap > 1) {
		struct unwind_sample smp = {
		    .pid = e->pid,
		    .tid = e->tid,
		    .ip = e->regs[8],
		    .ips = ips,
		    .nips = copy_fp_walk(e, ips, MAX_FP_FRAMES),
		    .regs = e->regs,
		    .stack = e->stack,
		    .stack_len = e->stack_len,
		};
		n = unwinder_sample(s->unwinder, &smp, 1, 0, MAX_UNWIND_FRAMES, s->frames,
				    s->frames_cap);
	}
	if (!s->alloc ||
	    alloc_samples_add(s->alloc, e->pid, e->tid, &raw, sizeof(raw), s->frames, n) < 0)
		s->stats.dropped++;
	return 0;
}
