/*
 * The sampler's state, shared by its files: sampler.c (targets, threads,
 * the launched command, stats), sampler-records.c (each record read from
 * the rings, where it belongs) and sampler-run.c (the loop's side: stop
 * conditions, the end of a run). Nothing outside sampling/ includes it.
 */
#ifndef RECCE_SAMPLING_SAMPLER_INTERNAL_H
#define RECCE_SAMPLING_SAMPLER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/pick-bpf.h"
#include "perf/stack-copy.h"
#include "sampling/sampler.h"
#include "util/evloop.h"
#include "util/u64map.h"

struct perf_record;

#define MAX_KERNEL_FRAMES 1024 /* kernel callchain entries kept in dwarf mode */
#define MAX_UNWIND_FRAMES 512  /* user frames unwound per sample: a bad stack cannot loop us */

/* Processes seen in the midst of an exec at once, at most: an exec's
 * kernel work is short, so there are as many as CPUs at most but for
 * one blocked in it; past them the oldest is forgotten. */
#define SAMPLER_MID_EXECS 64

struct sampler {
	struct sampler_config cfg;
	struct perf_events *pe;
	struct unwinder *unwinder;
	struct offcpu *offcpu;		   /* with PERF_EVENTS_SWITCHES */
	struct alloc_probes *alloc_probes; /* with PERF_EVENTS_ALLOC, until the end */
	struct alloc_fast *alloc_fast;	   /* with PERF_EVENTS_ALLOC and alloc_fast, instead */
	struct alloc_samples *alloc;
	struct alloc_growth *growth; /* with cfg.growing */
	struct py_samples *py; /* Python frames in the samples of CPythons, when loaded */
	int py_err;
	struct pick_bpf pick; /* cpu_wide: the targets' family and the program keeping them */
	int cpu_wide, cpu_wide_err;
	/* cpu_wide and a launched command: its pid until its exec is over,
	 * whose samples till then are of recce's code that launches it
	 * (exec_begun: from its exec's record on, those the exec's kernel
	 * code took with the user registers still recce's). */
	pid_t before_exec;
	int exec_begun;
	/* The processes between their exec's record and the new program's
	 * first instruction (past_exec()), the oldest first. */
	pid_t mid_exec[SAMPLER_MID_EXECS];
	size_t nmid_exec;
	struct stack_copy copy; /* the copy the events ask for (dwarf) */
	pid_t *attached; /* with it: the threads attach() opened, to look at */
	size_t nattached, attached_cap;
	struct sampler_target *targets;
	size_t ntargets;
	int *pidfds; /* per target, -1 once exited or when pidfds are unsupported */
	int *alive;  /* per target */
	pid_t child; /* the launched command, 0 if none or reaped */
	int exec_failed;
	int signalled; /* the stop descriptor became readable */
	int until_fd;  /* sampler_until()'s pidfd, or -1 */
	int until_done;

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
	struct evloop_seat seat;
};

enum { TASK_RESCUED = 1, TASK_CLOSED = 2 };
enum { KNOWN_SCANNED = 1, KNOWN_RECORDS = 2 }; /* struct sampler's known */

/* Per perf task: TASK_RESCUED, TASK_CLOSED. */
int sampler_task_flags_set(struct sampler *s, int task, unsigned char flag);
unsigned char sampler_task_flags(const struct sampler *s, int task);

/* Names thread tid of pid from /proc. */
void sampler_thread_name(struct sampler *s, pid_t pid, pid_t tid);

/* PERF_EVENTS_ALLOC: probes the allocators of pid, a process a target
 * created, from now. */
void sampler_alloc_follow(struct sampler *s, pid_t pid);

/* An allocation event the in-process recorder wrote (alloc-fast.h), to
 * the allocation samples; s is arg. */
struct fast_alloc_event;
int sampler_handle_fast_alloc(const struct fast_alloc_event *e, void *arg);

/* Puts one record where it belongs (sampler-records.c); s is arg. */
int sampler_handle_record(const struct perf_record *rec, void *arg);

/* cpu_wide: the program of the per-CPU sampling events, which keeps the
 * targets' samples (with their Python frames, when a target is a
 * CPython). */
int sampler_cpu_prog(const struct sampler *s);

/* Reaps the launched command if it has exited; returns 1 if it did. */
int sampler_child_wait(struct sampler *s, int options);

/* Ends the launched command if it outlives its recording. */
void sampler_child_reap(struct sampler *s);

#endif
