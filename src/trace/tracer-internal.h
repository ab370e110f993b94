/*
 * The tracer's state, shared by its files: tracer.c (calls, limits, the
 * loop) and its two probe back ends, tracer-uprobes.c (probes through the
 * kernel) and tracer-fast.c (--fast: the probes through librecce-fast.so).
 * Nothing outside trace/ includes it.
 */
#ifndef RECCE_TRACE_TRACER_INTERNAL_H
#define RECCE_TRACE_TRACER_INTERNAL_H

#include "perf/stack-copy.h"
#include "proc/launch.h"
#include "symbols/func-exits.h"
#include "inject/fast-set.h"
#include "trace/py-call.h"
#include "trace/trace-calls.h"
#include "trace/tracer.h"
#include "util/evloop.h"
#include "util/u64map.h"

/* What a probe is for. */
enum probe_role { PROBE_ENTRY, PROBE_EXIT, PROBE_URETPROBE };

struct probe_of {
	int fn;
	uint8_t role;	      /* enum probe_role */
	struct func_exit how; /* PROBE_EXIT: which exit, and what decides it */
};

struct tracer {
	struct tracer_config cfg;
	const struct tracer_backend *be; /* tracer_fast with cfg.fast, else tracer_uprobes */
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct frame_namer *namer;
	struct trace_object *objs;
	size_t nobjs, objs_cap;
	char *program; /* the command's executable */
	char **libs;   /* ... and the libraries it loads at its start */
	size_t nlibs;
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
	struct trace_calls py_calls; /* py: patterns' calls, by thread */
	struct py_hists py_hists;    /* --hist of Python calls, by name */
	struct tracer_frame stack[TRACER_STACK_FRAMES];
	struct py_stack *py_stack; /* with tracer_py_frames() */
	struct unwinder *unwinder; /* want_stack with a stack copy: made at the first */
	struct u64map unwound;	   /* ... and the processes it has unwound */

	struct launch child;
	int child_status, child_done;
	const pid_t *targets;
	size_t ntargets;
	size_t alive; /* targets whose pidfd has not fired */

	/* The loop the tracer is attached to, until it leaves it. */
	struct evloop_seat seat;

	uint64_t mono_to_real;
	uint64_t pending; /* selected calls whose return is still to come */
	int draining;	  /* --count reached: wait for the returns of shown calls */
	uint64_t lost_at_count; /* draining: the losses before the last call shown */
	uint64_t shown;
	uint64_t sunk, sunk_told; /* events given the sink; as of its last catch-up */
	uint64_t dropped;
	uint64_t py_seen;     /* Python calls the probes saw, shown or not */
	uint64_t calls_seen;  /* calls the probes saw, for the breaker's flood look */
	uint64_t py_unnamed; /* ... whose names could not be read */
	uint64_t py_named;   /* ... that a py: pattern named */
	int py_qualified;    /* py_call_wants_qualified(): each call's own frame read */
	uint64_t py_unqualified;	      /* ... and not read, named by its file alone */
	/* The first names of those none named. */
	char py_others[TRACER_PY_OTHERS][TRACE_FUNCTION_LEN];
	size_t npy_others;
	uint64_t py_no_frames;	 /* shown calls whose hit read no Python frames */
	uint64_t stack_ends[UNWIND_END_KINDS]; /* --stack: stacks cut short, by why */
	struct stack_copy copy;		       /* --stack: the copy each call carries */
	uint64_t returns_unseen; /* goroutine returns maybe on unwatched threads */

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

/* Whether the probes read the Python frames of calls, through the
 * kernel: py: patterns with --stack or --caller, and any call with
 * --stack where a target is a CPython. */
int tracer_py_frames(const struct tracer *t);

/* Records which step failed; returns err. */
int tracer_fail(struct tracer *t, enum tracer_step step, int err, pid_t pid);

/* The next probe's entry, zeroed but for its function and role; probes
 * are numbered in the order they are added. NULL when out of memory. */
struct probe_of *tracer_push_probe(struct tracer *t, int fn, enum probe_role role);

/*
 * A probe back end: how probes get into the targets and their hits come
 * out. The tracer (tracer.c) pairs calls with returns, applies --if and
 * the limits, and runs the loop over either of them:
 *   tracer_uprobes  perf uprobes or BPF links through the kernel
 *                   (tracer-uprobes.c)
 *   tracer_fast     jumps into librecce-fast.so, records in rings in the
 *                   targets' memory (tracer-fast.c)
 * A NULL hook is one the back end has no use for.
 */
struct tracer_backend {
	int poll_ms; /* the loop looks at the hits this often, woken or not */
	/* Why function i cannot be probed so, whatever the target, or NULL. */
	const char *(*refused_entry)(struct tracer *t, size_t i);
	/* ... at addr in target pid (its code read there), or NULL. */
	const char *(*refused_at)(struct tracer *t, size_t i, pid_t pid, uint64_t addr);
	/* The buffers, once the functions are known; 0 or -errno (failed). */
	int (*open)(struct tracer *t);
	/* The probes into every target (a command launched first), then the
	 * limits started. A target that exited meanwhile is left out. */
	int (*start)(struct tracer *t);
	/* The descriptors that wake the loop when hits wait: how many there
	 * are, up to n of them into fds. */
	size_t (*wake_fds)(const struct tracer *t, int *fds, size_t n);
	/* Hands every hit to cb (with t); returns cb's last value. */
	int (*read)(struct tracer *t, int (*cb)(const struct uprobe_hit *, void *));
	/* Hits lost so far; and as of when hit h was written (NULL: now).
	 * Where that is known only within bounds, lost_before gives the
	 * lower, for a call's entry, and lost_at the upper, for what ends
	 * it: a loss between the two is never missed (NULL: lost_at). */
	uint64_t (*lost)(const struct tracer *t);
	uint64_t (*lost_at)(const struct tracer *t, const struct uprobe_hit *h);
	uint64_t (*lost_before)(const struct tracer *t, const struct uprobe_hit *h);
	/* The losses of thread tid alone so far, into lost: 0, or -1 where
	 * they are not its own (NULL: never). */
	int (*lost_thread)(const struct tracer *t, uint32_t tid, uint64_t *lost);
	/* Until when (CLOCK_MONOTONIC ns) a thread ran unwatched before it
	 * got its probes, the latest such, 0 none (NULL: none can): a
	 * goroutine's call that began before then may have returned on
	 * one, unseen. A time, not a count: recce may take a thread in
	 * before it reads a call that began earlier. */
	uint64_t (*blind)(const struct tracer *t);
	/* Every probe out of every target: 0, or the first error. */
	int (*remove)(struct tracer *t);
	int read_after_remove; /* hits made up to the removal are still to read */
	int sysv_args_only;    /* hits carry the argument registers only */
	/* Its counts into st (lost, children, links). */
	void (*stats)(const struct tracer *t, struct tracer_stats *st);
	void (*release)(struct tracer *t);
};

extern const struct tracer_backend tracer_uprobes, tracer_fast;

/* How the pattern that chose function i (a USDT probe) shows its
 * arguments; NULL for a function. */
const struct trace_usdt_spec *usdt_spec(const struct tracer *t, size_t i);

#endif
