/*
 * The recording engine behind `recce record`: attaches cpu-clock sampling,
 * off-CPU sampling (sampling/offcpu.h) or both to running processes (every thread, and every thread
 * or process they create later) or launches a command with sampling enabled at its exec, then reads
 * the rings until the duration is over, the stop descriptor becomes readable, or every target has
 * exited.
 *
 * Records go where they belong: mappings, forks, execs and names to the
 * process registry (which opens every mapped file when it appears, so code
 * can be named after its process exits), thread names to the aggregator,
 * samples to the aggregator, through the DWARF unwinder in dwarf mode.
 * Before an exec replaces a process's mappings, its stacks are resolved
 * through the resolver, if one is given.
 *
 * System-wide (sampler_config's system_wide), one event per CPU samples
 * every process. A process is read from /proc (its mappings, its name,
 * its thread's name) when the first record about it arrives; one that is
 * already gone by then is known from its records alone (the mappings of a
 * program it exec'd arrive as records), so a short-lived process is
 * named too. Samples of idle CPUs are counted and left out.
 *
 * Threads are found by listing /proc/PID/task after the events of the
 * listed threads are open, again and again until a listing finds nothing
 * new: a thread created by an already-sampled thread inherits its events,
 * and one created earlier is opened by the next listing. A thread that got
 * both (it was created in the instant between) would be sampled twice;
 * the sampler notices the second stream and closes it.
 *
 * The sampler runs in its caller's event loop (sampler_attach), beside
 * whatever else the caller waits on (windows, a socket, a tracer), or in
 * one of its own (sampler_run). It knows nothing of what shares it.
 *
 * Ownership: sampler_new() returns a heap object freed by sampler_free();
 * it borrows the registry, aggregator and resolver of its config, and the
 * loop it is attached to.
 */
#ifndef RECCE_SAMPLER_H
#define RECCE_SAMPLER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/alloc-bpf.h"
#include "profile/profile.h"
#include "sampling/alloc-fast.h"
#include "sampling/alloc-samples.h"
#include "profile/py-samples.h"
#include "proc/unwind.h"

struct aggregate;
struct evloop;
struct proc_registry;
struct resolver;
struct sampler;
struct symbolizer;

struct sampler_config {
	const pid_t *pids; /* attach to these processes... */
	size_t npids;
	const pid_t *tids; /* ...or to these threads only (and the threads they start)... */
	size_t ntids;
	char *const *argv; /* ...or launch this command (searched in PATH)... */
	int system_wide;   /* ...or every process, on every CPU (record -a)... */
	int cgroup_fd;	   /* ...of this cgroup only (a directory descriptor), when >= 0 */
	const sigset_t *child_sigmask; /* the command's signal mask; NULL = none blocked */

	unsigned
	    events;    /* PERF_EVENTS_CPU_CLOCK (0 too), _SWITCHES (off-CPU), or both; or _ALLOC */
	unsigned freq; /* cpu-clock samples per second of CPU time */
	double duration; /* seconds; 0 = until stopped or every target exits */
	int dwarf;	 /* --call-graph dwarf or auto */
	/* --call-graph auto: where the unwind of the copied stack stops short
	 * of the stack's end, the frame-pointer walk goes on from the frame
	 * both reached. */
	int fp_after;
	uint32_t stack_bytes;
	/* The copy grows while recording when stacks end where it did
	 * (perf/stack-copy.h): only with -p sampled per CPU (cpu_wide), or the
	 * whole system's or a cgroup's CPU samples; up to copy_max bytes (0:
	 * the kernel's most). */
	int copy_grows;
	uint32_t copy_max;
	size_t ring_pages; /* data pages per CPU ring (a power of two); 0 = default */
	int unwind_check;  /* dwarf: compare the fast unwinder with libdwfl's */
	int stop_fd;	   /* stop when readable (a signalfd); -1 for none */

	struct proc_registry *procs;
	struct aggregate *agg;
	struct resolver *resolver; /* may be NULL */

	/* PERF_EVENTS_ALLOC (pids only): allocation samples go to agg, those
	 * still in use at the end to inuse; the allocators are found through
	 * sym. */
	uint64_t alloc_interval; /* bytes allocated per sample, on average */
	/* Attach the probes as an older kernel would (perf/alloc-bpf.h): 0
	 * the newest way this one has, 1 without uprobe sessions, 2 without
	 * uprobe_multi links either; for the tests and the measures of
	 * those fallbacks. */
	int alloc_older;
	/* Sample in the process instead, through librecce-fast.so's
	 * trampolines on the allocator (alloc-fast.h). */
	int alloc_fast;
	/* What is in use, by stack, at snapshots every growth_every_ns; the
	 * stacks that only grew to growing at the end (alloc-growth.h). NULL:
	 * none taken. */
	struct aggregate *growing;
	uint64_t growth_every_ns;
	/* Samples of CPython processes carry their Python frames
	 * (py-samples.h) unless this is set. */
	int no_python;
	/* pids: each thread sampled by its own CPU time, on events of its
	 * own, rather than every CPU at freq with only the targets'
	 * samples kept (pick-bpf.h), which needs BPF and falls back to
	 * this when it cannot be loaded. A thread that runs less than a
	 * period has no sample this way. */
	int per_thread;
	struct aggregate *inuse;
	struct symbolizer *sym;
};

struct sampler_target {
	pid_t pid;
	pid_t tid;     /* the one thread sampled (config tids), or 0 for all */
	int err;       /* 0 when attached; -ESRCH when it was gone before its events were open */
	char *cmdline; /* the command line, arguments separated by spaces */
};

enum sampler_stop {
	SAMPLER_STOP_NONE,
	SAMPLER_STOP_DURATION,
	SAMPLER_STOP_SIGNAL,
	SAMPLER_STOP_EXITED,
	SAMPLER_STOP_COMMAND, /* the command of sampler_until() ended */
};

struct sampler_stats {
	uint64_t samples;  /* samples aggregated (switches out included) */
	uint64_t switches; /* switches out aggregated, with their time off the CPU: */
	uint64_t offcpu_ns;
	uint64_t lost;	    /* records the kernel could not write (PERF_RECORD_LOST):
			     * samples, and the mappings, names and tasks beside them */
	uint64_t throttled; /* PERF_RECORD_THROTTLE: the kernel lowered the rate */
	uint64_t dropped;   /* duplicate or unusable samples not aggregated */
	uint64_t malformed; /* records that failed a bounds check */
	uint64_t idle;	    /* system-wide: samples of idle CPUs, left out */
	size_t processes;   /* system-wide: processes with a sample */
	size_t threads;	    /* threads with at least one sample */
	int64_t start_ns;   /* CLOCK_REALTIME when sampling started */
	uint64_t cpu_ns;    /* after sampler_finish(): the targets' CPU time while sampled,
			     * as the kernel's cpu-clock events counted it (0: not
			     * sampled by CPU time, or system-wide) */
	int64_t duration_ns;
	int user_only; /* the kernel refused kernel-mode sampling */
	enum sampler_stop stop;
	int child_status; /* wait status of the launched command, if it exited */
	int child_exited;
	struct unwind_check_stats unwind_check; /* with unwind_check */
	/* Stacks whose unwind stopped short, ended with a marker frame that
	 * says why, by enum unwind_end (dwarf and auto). */
	uint64_t unwind_ends[UNWIND_END_KINDS];
	uint64_t copy_wanted;			/* unwinder_copy_wanted() */
	/* The copy at the end (dwarf); when it grew (copy_grows), the
	 * samples taken with smaller copies, and the stacks of those that
	 * ended where their copy did. */
	uint32_t copy_bytes;
	uint64_t copy_before, copy_cut_before;
	struct alloc_samples_stats alloc;	/* with PERF_EVENTS_ALLOC */
	enum alloc_bpf_mode alloc_mode;		/* how the probes were attached */
	/* With growing: the stacks that only grew, over how many snapshots
	 * how far apart (-ENOMEM in growing_stacks: out of memory). */
	int growing_stacks;
	size_t growth_points;
	uint64_t growth_every_ns;
	int alloc_fast; /* in the process (alloc-fast.h), with what it counted: */
	struct alloc_fast_stats fast;
	const char *const *allocators; /* the files probed, valid until sampler_free() */
	size_t nallocators;
	/* Processes the targets created while sampled: allocators probed
	 * from when recce read of them, ended before that, or that could
	 * not be probed. */
	uint64_t alloc_followed, alloc_ended, alloc_unfollowed;
	/* Python frames: what was seen of CPython processes, and why none
	 * could be read (-errno: the program could not be loaded or attached;
	 * 0 when it was, or was not asked for). */
	struct py_samples_stats python;
	int python_err;
	/* pids: sampled per CPU (cpu_wide), or per thread because that was
	 * asked (per_thread) or because the program could not be loaded
	 * (-errno in cpu_wide_err). */
	int cpu_wide;
	int cpu_wide_err;
};

int sampler_new(const struct sampler_config *cfg, struct sampler **out);

/*
 * Opens the events: attaches to the pids or launches the command. Returns
 * 0 when at least one target is sampled (see sampler_targets() for each
 * one's outcome), -ESRCH when none could be attached, -ENOENT when none
 * maps an allocator (PERF_EVENTS_ALLOC; its target's err says so),
 * -EOPNOTSUPP when the kernel cannot sample allocations, -EACCES when the
 * kernel refuses perf_event_open, -EMFILE when out of descriptors, or the
 * errno of a failed exec of the command (-ENOENT, -EACCES...: then
 * sampler_exec_failed() is 1).
 */
int sampler_start(struct sampler *s);
int sampler_exec_failed(const struct sampler *s);

/* With alloc_fast: what failed in loading the library into a target (its
 * failure FAST_OK when nothing did), NULL without; and the first
 * allocator function left unhooked, with why (NULL when none). */
const struct fast_set_info *sampler_alloc_fast_info(const struct sampler *s);
const char *sampler_alloc_fast_refused(const struct sampler *s, const char **why);

/* Before the attach: the run also stops when pidfd becomes readable, the
 * caller's pidfd of a command it runs beside the targets for the time the
 * recording lasts (`record -a -- sleep 2`); the caller keeps and closes
 * it. */
void sampler_until(struct sampler *s, int pidfd);

/*
 * Attaches the started sampler to a loop its caller runs: its rings, its
 * stop descriptor, its targets' pidfds, a timer that wakes the loop every
 * half second and at the end of the duration, and a check that reads the
 * rings after every wake. When a stop condition holds (the duration, the
 * stop descriptor, every target gone, an error reading), the sampler
 * leaves the loop and calls done(arg), once. Returns 0 or -ENOMEM.
 */
int sampler_attach(struct sampler *s, struct evloop *loop, void (*done)(void *arg), void *arg);

/* While attached: reads what the kernel wrote until now, as a wake of the
 * loop would (a window about to be cut takes every sample taken before
 * the cut). Returns the number of records read, or -errno. */
int sampler_read(struct sampler *s);

/*
 * After the loop, before it is released: leaves it if done() was not
 * called (its owner stopped the run: the stop is a signal's), detaches
 * the allocation probes, and reads what the kernel wrote until now.
 * Returns 0, or the error that stopped the run, or the read's.
 */
int sampler_drain(struct sampler *s);

/* Ends the run after the drain: off-CPU waits still open are counted,
 * allocations still in use taken, a launched command ended. Returns 0 or
 * -ENOMEM. */
int sampler_finish(struct sampler *s);

/* The whole run in a loop of its own: attach, run until a stop condition,
 * drain, finish. Returns 0 or -errno. */
int sampler_run(struct sampler *s);

/* For a sampler that runs for days (the continuous agent), between
 * windows: what it learnt of each process and thread it saw (whether
 * /proc was read, its name) is forgotten once it holds more than
 * SAMPLER_KNOWN_MAX entries (the living are read again at their next
 * sample); with files_closed (symbolizer_sweep() closed some), so is
 * the unwinder's state that names files. */
#define SAMPLER_KNOWN_MAX (1u << 18)
void sampler_trim(struct sampler *s, int files_closed);

/* The resolver that names a process's stacks before an exec replaces
 * its mappings, from now on (the continuous agent's, one per window). */
void sampler_set_resolver(struct sampler *s, struct resolver *r);

/* The targets, in the order given (one for a launched command). */
size_t sampler_targets(const struct sampler *s, const struct sampler_target **targets);

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st);

/* Samples per second of the whole run. */
double sampler_rate(const struct sampler_stats *st);

/* What a recording says about itself, beside what the sampler knows. */
struct sampler_info {
	const char *invocation; /* "recce record ...", or NULL */
	int timeline;		/* the profile has a sample timeline */
	uint64_t timeline_kept; /* samples in it */
};

/* Writes the run, whose stats sampler_get_stats() gave, into p's comments
 * ("pid: 42", "command: ...", "duration: 10.000 s", ...) and its time and
 * duration fields. */
void sampler_describe(const struct sampler *s, const struct sampler_stats *st,
		      const struct sampler_info *info, struct profile *p);

/* Closes every event. A launched command still running gets SIGTERM (and
 * SIGKILL if it lingers for 2 s) and is reaped: it ends with its recording. */
void sampler_free(struct sampler *s);

#endif
