/*
 * The tracer's state, shared by its files: tracer.c (probes through the
 * kernel, the loop) and tracer-fast.c (--fast: the probes through
 * librecce-fast.so). Nothing outside trace/ includes it.
 */
#ifndef RECCE_TRACE_TRACER_INTERNAL_H
#define RECCE_TRACE_TRACER_INTERNAL_H

#include "proc/launch.h"
#include "symbols/func-exits.h"
#include "trace/fast-set.h"
#include "trace/trace-calls.h"
#include "trace/tracer.h"

/* What a probe is for. */
enum probe_role { PROBE_ENTRY, PROBE_EXIT, PROBE_URETPROBE };

struct probe_of {
	int fn;
	uint8_t role;	      /* enum probe_role */
	struct func_exit how; /* PROBE_EXIT: which exit, and what decides it */
};

struct tracer {
	struct tracer_config cfg;
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct frame_namer *namer;
	struct trace_object *objs;
	size_t nobjs, objs_cap;
	char *program; /* the command's executable */
	struct trace_resolved res;
	int resolved;
	struct trace_sig *sigs;
	const char **refused; /* by function: why it cannot be probed, or NULL */
	struct trace_hist *hists;
	struct uprobe_set *up;	/* NULL with cfg.fast */
	struct fast_set **fast; /* with cfg.fast: one a target */
	size_t nfast;
	struct fast_set_info fast_info; /* of the last target loaded into */
	struct probe_of *probes;	/* by probe index */
	size_t nprobes, probes_cap;
	struct trace_limits limits;
	struct trace_calls calls;
	struct tracer_frame stack[TRACER_STACK_FRAMES];

	struct launch child;
	int child_status, child_done;
	const pid_t *targets;
	size_t ntargets;
	size_t alive; /* targets whose pidfd has not fired */

	/* The loop the tracer is attached to, until it leaves it. */
	struct evloop *loop;
	void (*done)(void *arg);
	void *done_arg;

	uint64_t mono_to_real;
	uint64_t pending; /* selected calls whose return is still to come */
	int draining;	  /* --count reached: wait for the returns of shown calls */
	uint64_t shown;
	uint64_t sunk, sunk_told; /* events given the sink; as of its last catch-up */
	uint64_t dropped;

	enum tracer_step failed;
	pid_t failed_pid;
	const char *failed_path;
	int failed_fn;	      /* TRACER_RETURNS: the function */
	size_t failed_offset; /* ... and the byte that did not decode */
	struct tracer_method_counts methods;
	/* Following new processes: a process outside the family that maps
	 * a probed file (0: none; -errno: not known), or why the kernel
	 * could not follow them. */
	pid_t fork_outsider;
	char fork_outsider_comm[64];	/* its name then */
	const char *fork_outsider_file; /* the object it maps, borrowed */
	int fork_err;
};

/* Records which step failed; returns err. */
int tracer_fail(struct tracer *t, enum tracer_step step, int err, pid_t pid);

/* The next probe's entry, zeroed but for its function and role; probes
 * are numbered in the order they are added. NULL when out of memory. */
struct probe_of *tracer_push_probe(struct tracer *t, int fn, enum probe_role role);

/* --fast: why function i, at addr in target pid, cannot be traced so, or
 * NULL. */
const char *tracer_fast_refused(struct tracer *t, size_t i, pid_t pid, uint64_t addr);

/* --fast: the library loaded into every target, the probes planned and
 * the jumps written; the limits started. A target that exited meanwhile
 * is left out. */
int tracer_fast_start(struct tracer *t);

/* Hands every record of every target to cb (with t), as uprobe hits;
 * returns cb's last value. */
int tracer_fast_read(struct tracer *t, int (*cb)(const struct uprobe_hit *, void *));

/* Records lost in all targets. */
uint64_t tracer_fast_lost(const struct tracer *t);
/* The children of all targets, into st: forked and not traced, calls
 * from those recce could not find, those whose jumps it saw not removed. */
void tracer_fast_children(const struct tracer *t, struct tracer_stats *st);

/* Puts back the code of every target: 0, or the first error. */
int tracer_fast_remove(struct tracer *t);

void tracer_fast_free(struct tracer *t);

#endif
