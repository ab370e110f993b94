/*
 * The tracer: the engine of `recce trace`, and of whatever else traces
 * calls (capture, the agent). It finds the functions that patterns name
 * in live processes or in a command it starts, puts uprobes on their
 * entries (and returns), pairs each call with its return per thread,
 * applies the --if condition and the limits, and hands every event, in
 * order, to the caller's sink. It never prints and never exits.
 *
 * Safety: probes are perf events; tracer_run removes them all the moment
 * a limit fires or the target exits, and the kernel removes them anyway
 * when recce dies, however it dies. A target given by pid is never
 * stopped (no ptrace), except with cfg.fast: its threads are stopped
 * while the library is loaded and while the jumps go in and come out, and
 * the library puts the code back itself if recce dies. A command is held
 * at a gate until its probes are in place, and never runs untraced if
 * recce dies first.
 *
 * Use:
 *   tracer_new(&cfg, &t)    resolve patterns, read signatures, open buffers
 *   tracer_start(t)         start the command, attach the probes
 *   tracer_run(t)           the loop, until a limit, a signal or an exit;
 *                           or tracer_attach(t, loop, ...) to a loop the
 *                           caller runs, then tracer_finish(t)
 *   tracer_get_stats(t, &s) what happened, why it stopped, what was lost
 *   tracer_wait_child(t)    the command's exit status, once it has ended
 *   tracer_free(t)
 *
 * Errors: each step returns 0 or a negative errno; tracer_failure() then
 * says which step failed, for which pid and (for a probe) which file, so
 * that the caller can write a message a person can act on. tracer_new
 * sets *out even when it fails (unless out of memory), for that reason.
 *
 * Ownership: the caller owns cfg's arrays, the condition and the sink's
 * argument, and keeps them alive until tracer_free.
 */
#ifndef RECCE_TRACE_TRACER_H
#define RECCE_TRACE_TRACER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject/fast-set.h"
#include "proc/unwind.h"
#include "trace/trace-args.h"
#include "trace/trace-event.h"
#include "trace/trace-hist.h"
#include "trace/trace-limits.h"
#include "trace/trace-pattern.h"

#define TRACER_STACK_FRAMES 32 /* callers shown for --stack */
#define TRACER_PY_OTHERS    4  /* Python names kept for a pattern that names none */

/* One caller of a traced call, for --stack. */
struct tracer_frame {
	char name[256];	  /* "function" or "object+0xoffset" */
	const char *file; /* NULL when unknown; owned by the symbolizer */
	int line;
};

/*
 * The sink: each shown event, in order. For a call with want_stack set,
 * stack holds its callers, innermost first; otherwise nstack is 0. r is
 * NULL when the tracer has caught up with the targets after giving it
 * events (so that a buffered output can be written out now).
 */
typedef void (*tracer_sink)(void *arg, const struct trace_record *r,
			    const struct tracer_frame *stack, size_t nstack);

struct tracer_config {
	const pid_t *pids; /* processes to trace, or NULL with argv */
	size_t npids;
	char *const *argv;	       /* a command to start and trace */
	const sigset_t *child_sigmask; /* the command's signal mask; NULL: none blocked */
	const struct trace_pattern *patterns;
	size_t npatterns;
	size_t max_probes; /* more matching functions than this: -E2BIG */

	int want_args;		       /* fill arguments into call records */
	int want_return;	       /* probe returns and pair them with calls */
	int want_caller;	       /* name the caller in call records */
	int want_stack;		       /* pass the callers of each call to the sink */
	/* want_stack: bytes of user stack copied at each call, unwound from
	 * the call frame information (0: the frame-pointer chain only); with
	 * fp_after, the frame-pointer chain goes on where that unwind stops
	 * short (--call-graph auto, as the sampler's). */
	uint32_t stack_bytes;
	int fp_after;
	/* The copy grows, with the BPF program, when the stacks cut where it
	 * ended are 1 in 100 of the calls (4 at least), up to
	 * UPROBE_MAX_STACK (--call-graph auto without BYTES). */
	int copy_grows;
	int want_hist;		       /* a latency histogram per function */
	const struct trace_cond *cond; /* --if, or NULL */

	uint64_t count;		  /* events to show, 0: no limit */
	uint64_t time_ns;	  /* 0: no limit */
	uint64_t rate_n, rate_ms; /* circuit breaker; rate_n 0: off */

	int stop_fd; /* readable when a person asks to stop (a signalfd); -1: none */
	int no_bpf;  /* per-event uprobes, without BPF, even where BPF links work */
	int no_links; /* per-event uprobes, with BPF on each, even where links work */
	/* Per-event uprobes (no links): the most probe events at once (see
	 * uprobe_set_config); 0: no limit. */
	size_t max_events;
	size_t ring_pages; /* data pages per CPU ring; 0: the default */
	/* Returns through uretprobes, which rewrite the return address on
	 * the target's stack (for comparisons; unsafe in Go, C++ and any
	 * code that unwinds), instead of probes on each function's exits. */
	int return_uretprobe;
	/* Calls and returns through librecce-fast.so loaded into each
	 * process of pids, and jumps on the functions' entries and before
	 * their exits (inject/fast-set, tracer-fast.c), instead of uprobes;
	 * not with argv nor want_stack. */
	int fast;
	tracer_sink sink;
	void *sink_arg;
	/* With argv: called with the command's pid once it exists, before it
	 * runs its program and before any probe, so that what else watches it
	 * can start first (NULL: nothing to call). */
	void (*held)(void *arg, pid_t pid);
	void *held_arg;
};

/* Which step failed, as tracer_failure() reports it. */
enum tracer_step {
	TRACER_OK,
	TRACER_TARGET,	/* reading a target's mappings; pid says which */
	TRACER_PROGRAM, /* the command's executable was not found */
	TRACER_RESOLVE, /* the patterns: -ENOENT none matched, -E2BIG too many */
	TRACER_BUFFERS, /* opening the trace buffers */
	TRACER_LAUNCH,	/* starting the command */
	TRACER_ATTACH,	/* attaching probes; pid and path say where */
	TRACER_EXITED,	/* every target exited before the probes were in */
	TRACER_EXEC,	/* the command could not be run */
	TRACER_RETURNS, /* finding a function's exits (tracer_failed_code) */
	TRACER_REFUSED, /* the kernel probes none of them (tracer_refused) */
	TRACER_FAST,	/* --fast: loading the library (tracer_fast_info) */
	TRACER_PATCH,	/* --fast: writing the jumps */
};

/* How the returns of the traced functions are seen. */
struct tracer_method_counts {
	size_t exits;	       /* functions whose exits are probed */
	size_t exit_probes;    /* probes on their rets and jumps out */
	size_t unprobed_jumps; /* jumps out that cannot be decided, not probed */
	size_t uretprobe;      /* functions with a uretprobe (return_uretprobe) */
};

struct tracer_stats {
	enum trace_stop stop;
	uint64_t shown;		   /* events shown (a call and its return once) */
	uint64_t dropped;	   /* calls beyond MAX_DEPTH or MAX_THREADS, unpaired */
	uint64_t lost;		   /* events the kernel dropped, its ring full */
	uint64_t lost_after_count; /* ... of them after the last call --count asked for */
	uint64_t malformed;	   /* records that failed a bounds check, skipped */
	uint64_t unfollowed;	   /* probes not opened on threads created while traced */
	uint64_t returns_unseen;   /* goroutine returns maybe on a thread not yet watched */
	uint64_t fast_forks;	   /* --fast: children forked while traced, not traced */
	uint64_t fast_unfound;	   /* --fast: calls of children recce could not find */
	size_t fast_children_left; /* --fast: children whose jumps recce saw not removed */
	/* Processes created while traced: traced from their first
	 * instruction, or only from when recce read of them; then why: a
	 * process outside the targets' families that maps a probed file
	 * (< 0: not known), or the kernel's error. */
	uint64_t followed, followed_late;
	pid_t fork_outsider;
	const char *fork_outsider_comm, *fork_outsider_file; /* borrowed */
	int fork_err;
	size_t ntargets;  /* processes traced */
	size_t functions; /* functions traced: matched, less those refused */
	size_t usdt_probes; /* USDT probes traced (usdt: patterns) */
	size_t pythons;	    /* interpreters whose Python calls are traced (py:) */
	uint64_t py_seen;   /* Python calls the probes saw, shown or not */
	uint64_t py_named;  /* ... that a py: pattern named */
	/* With a pattern only module.qualname matches: calls whose own
	 * frame was not read, named and matched by their file alone. */
	uint64_t py_unqualified;
	/* The first distinct names of those no pattern named, as shown
	 * ("py:app.handle"), for the message when none was named. */
	char py_others[TRACER_PY_OTHERS][TRACE_FUNCTION_LEN];
	size_t npy_others;
	/* ... whose name or file could not be read: not copied at the hit
	 * (perf uprobe events) and gone when recce read the hit (the
	 * process exited, or the code was freed), so matched by no pattern */
	uint64_t py_unnamed;
	/* With Python callers read (py: calls with --stack or --caller,
	 * any call with --stack in a CPython): Python frames at the calls
	 * shown that could not be named (their code gone when recce read
	 * the call), and whether the probes could not read them at all (no
	 * BPF loop: Linux 5.17), the stacks then the interpreter's. */
	uint64_t py_frames_unread;
	int py_frames_off;
	/* ... calls shown whose Python frames were not read: their
	 * process's interpreter not read yet (a command's first calls), or
	 * their thread's state not found */
	uint64_t py_no_frames;
	/* --stack: the stacks shown that end early, at a frame that says
	 * why, by enum unwind_end; the most bytes of stack past the copy
	 * that one ended at the copy's end wanted for its next frame. */
	uint64_t stack_ends[UNWIND_END_KINDS];
	uint64_t copy_wanted;
	/* The copy as it ends; when it grew, the calls taken with smaller
	 * copies and of them those cut where the copy ended. */
	uint32_t copy_bytes;
	uint64_t copy_before, copy_cut_before;
	uint64_t copy_cut; /* every call cut where its copy ended */
	pid_t first;	  /* the first of them (or the command) */
	int uses_links;	  /* attached with BPF links, not perf uprobe events */
	int uses_bpf;	  /* hits written by BPF (links, or on perf uprobe events) */
	struct tracer_method_counts methods;
};

struct evloop;
struct tracer;

int tracer_new(const struct tracer_config *cfg, struct tracer **out);
int tracer_start(struct tracer *t);

/*
 * Attaches the started tracer to a loop its caller runs: its rings, its
 * stop descriptor, its targets' pidfds, timers that wake the loop every
 * poll interval and when the time limit is up, and a check that takes
 * the hits after every wake. When the trace is over (a limit, a signal,
 * every target gone), it leaves the loop and calls done(arg), once.
 * Returns 0 or -ENOMEM.
 */
int tracer_attach(struct tracer *t, struct evloop *loop, void (*done)(void *arg), void *arg);

/* After the loop, before it is released: every probe out of the targets
 * (a trace its loop's owner stopped stops as for a signal), the last
 * hits read, the calls still open closed. Returns 0 or -errno. */
int tracer_finish(struct tracer *t);

/* The whole trace in a loop of its own: attach, run, finish. */
int tracer_run(struct tracer *t);
/* Stops tracer_run() at once, for why (the sink could not write: a full
 * disk), unless a limit fired first; the probes come out as for a limit. */
void tracer_stop(struct tracer *t, enum trace_stop why);
void tracer_free(struct tracer *t);

/* After a failed step: which one, the pid concerned (0 if none), and the
 * file whose probe failed (NULL if none). */
enum tracer_step tracer_failure(const struct tracer *t, pid_t *pid, const char **path);

/* After a failed TRACER_RETURNS: the function (an index in
 * tracer_functions()) and the offset in it of the byte that did not
 * decode. */
int tracer_failed_code(const struct tracer *t, size_t *offset);

/* The functions the patterns matched, and for a pattern that matched
 * none, the nearest names (for a failed TRACER_RESOLVE too). */
const struct trace_resolved *tracer_functions(const struct tracer *t);
/* Why the kernel would refuse a probe on function i's first instruction
 * (func_unprobeable()), so that it is not traced; NULL when it is. */
const char *tracer_refused(const struct tracer *t, size_t i);

/* Per-event uprobes: the probe events an attach needed, with the probes,
 * threads and CPUs they multiply, for an attach that failed with -E2BIG. */
void tracer_events_wanted(const struct tracer *t, size_t *events, size_t *probes, size_t *ncpus);
/* What the tracer read of function i's arguments from DWARF. */
const struct trace_sig *tracer_signature(const struct tracer *t, size_t i);
/* Function i's latency histogram (want_hist), or NULL; reading its
 * quantiles sorts it. */
struct trace_hist *tracer_hist(struct tracer *t, size_t i);
/* With want_hist, the histogram of the i-th Python function seen ended
 * and its name ("py:app.handle"), or NULL past the last; and the calls of
 * functions past the first PY_HISTS, which have none. */
struct trace_hist *tracer_py_hist(struct tracer *t, size_t i, const char **name);
uint64_t tracer_py_hists_dropped(const struct tracer *t);

void tracer_get_stats(const struct tracer *t, struct tracer_stats *st);

/* With cfg.fast: how the library was loaded, or why it was not. */
const struct fast_set_info *tracer_fast_info(const struct tracer *t);

/* Waits for the command to end (if it has not) and returns its wait
 * status; -1 without a command. Call it after tracer_run, with the stop
 * signals delivered again, so that a second Ctrl-C reaches it. */
int tracer_wait_child(struct tracer *t);

#endif
