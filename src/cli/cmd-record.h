/*
 * recce record's options as parsed (cmd-record.c), and the messages that
 * turn the sampler's failures and findings into words
 * (record-messages.c).
 */
#ifndef RECCE_CLI_CMD_RECORD_H
#define RECCE_CLI_CMD_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/usage.h"
#include "proc/procstat.h"
#include "sampling/sampler.h"

/* Where record writes its profile without -o. */
#define RECORD_DEFAULT_FILE "recce.pb.gz"

/* The sample timeline a recording keeps at most (record --timeline,
 * capture, trace --profile): about ten million samples, hours of a busy
 * thread at 99 Hz. */
/* --leaks: a snapshot of what is in use every second (fewer, further
 * apart, past 64). */
#define GROWTH_EVERY_NS	   1000000000ull
#define TIMELINE_MAX_BYTES (64u << 20)

/* What record samples (--event). */
enum record_event { RECORD_CPU, RECORD_OFFCPU, RECORD_WALL, RECORD_ALLOC };

struct record_args {
	enum record_event event;
	pid_t *pids;
	size_t npids;
	pid_t *tids; /* -t: only these threads */
	size_t ntids;
	char **argv; /* the command, NULL-terminated */
	int beside;  /* argv runs beside the targets, for as long as recording lasts */
	long long freq;
	int freq_given; /* -F was on the command line */
	double duration;
	const char *output;
	enum call_graph call_graph;
	uint32_t stack_bytes;
	int stack_bytes_given; /* --call-graph MODE,BYTES: the copy does not grow */
	int timeline;
	int tree;		 /* --tree: the -p processes' descendants too */
	int all;		 /* -a: every process */
	int per_thread;		 /* --per-thread: -p sampled by threads, not CPUs */
	const char *cgroup;	 /* --cgroup: every process of this cgroup */
	int no_symbolize;	 /* --no-symbolize: addresses and build-ids only */
	int jit_map;		 /* --jit-map: JVM targets asked for their perf maps */
	char *invocation;	 /* "recce record ...", for the profile's comments */
	uint64_t alloc_interval; /* --alloc-interval: bytes per allocation sample */
	const char *alloc_text;	 /* as given, for the messages */
	int fast;		 /* --fast: allocations sampled in the process (alloc-fast.h) */
	int leaks;		 /* --leaks: the stacks whose use only grew (alloc-growth.h) */
};

/* Opens --cgroup's directory: the path as given, else under the cgroup
 * mounts; exits with a message when there is none. */
int record_open_cgroup(const char *path);

/* A failed sampler_start(), as one message a person can act on; exits. */
__attribute__((noreturn)) void record_say_start_failed(const struct record_args *a,
						       const struct sampler *s, int err);

/* --tree: adds every live descendant of the -p processes to a->pids. */
void record_add_descendants(struct record_args *a);

/* The CPU ticks of the -p processes' descendants at the start, so that a
 * recording that finds the processes idle can name the busy ones. */
struct record_children {
	struct procstat_task *v;
	size_t n, cap;
};
void record_children_begin(const struct record_args *a, struct record_children *c);

/* After a recording of -p processes without --tree that took no sample:
 * names their descendants that used CPU meanwhile, and how to record
 * them. Frees c. */
void record_say_busy_children(const struct record_args *a, struct record_children *c,
			      uint64_t samples);

/* The note at the start of a recording of -p or -t targets (ntargets of
 * them): what is sampled, how often. */
void record_say_recording(const struct record_args *a, size_t ntargets);
/* -e alloc: how the allocators are probed, when it costs more than it
 * would on a kernel with uprobe sessions. */
void record_say_alloc_probes(const struct sampler *s);

/* The summary of a recording whose profile went to written. */
void record_say_written(const struct record_args *a, const struct sampler_stats *st,
			const char *written);

/* A launched command's end as recce's exit status, as perf record and a
 * shell give it (its status, or 128 + its signal), said in a note; or
 * status as it was. */
int record_command_status(const struct sampler_stats *st, int status);

/* What the kernel lost, and with RECCE_UNWIND_CHECK how the unwinders
 * compared. */
/* --jit-map: asks each JVM among the targets (those attached) for its
 * perf map, before their stacks are named; says what failed. */
void record_ask_jit_maps(const struct sampler_target *t, size_t n);

/* Names the processes whose JIT code had no perf map (shown as "[JIT:
 * comm]"), and how their runtime writes one. */
void record_say_jit_unnamed(struct proc_registry *procs, const pid_t *pids, size_t n);

void record_say_losses(const struct record_args *a, const struct sampler_stats *st,
		       int unwind_check);

/* What was read of the Python frames of CPython targets, what was not and
 * why; or, when the frame reader could not run, why, if a target (of the
 * n given, or the command) looks like a Python. */
void record_say_python(const struct record_args *a, const struct sampler_stats *st,
		       struct proc_registry *procs, const struct sampler_target *t, size_t n);

/* The time the -p targets' threads have waited on a run queue so far. */
uint64_t record_wait_ns(const struct record_args *a);

/* After a cpu recording of -p processes that were there all along but
 * hardly ran (cpu_ns of CPU time in duration_ns): says they were starved
 * for CPU when they waited for one longer (wait_ns) than they ran, else
 * idle, and how to see where they wait. Says instead that their samples
 * fell short when the events' count of their CPU time while sampled
 * (used_ns, 0 for none) is more than twice what the samples stand for
 * (cpu_ns): threads that
 * end before their CPU time adds up to one sampling period are never
 * sampled. */
void record_say_idle(const struct record_args *a, uint64_t cpu_ns, uint64_t used_ns,
		     uint64_t wait_ns, int64_t duration_ns);

/* After a recording of -p processes that sampled no thread: says which of
 * them exited (gone, or a zombie) meanwhile, during the attach or later,
 * leaving an empty profile; returns whether any did. */
int record_targets_exited(const struct sampler_target *t, size_t n);

/* record-options.c: parses argv into a (exits 2 with a message on a usage
 * error). */
void record_parse_args(struct record_args *a, int argc, char **argv);

#endif
