/*
 * Python frames in the samples of CPython processes (`record`, `capture`,
 * `agent --continuous`): a BPF program (perf/py-bpf.h) on the sampling
 * events (cpu-clock, switches off the CPU) reads a thread's frames at the
 * moment of each sample, and here each sample is given the record read
 * for it among its thread's still queued (profile/py-match.h: the ones
 * before it were the records of samples perf lost). The frames
 * become the Python part of the sample's stack (proc/py-names.h), named
 * from the code objects when the record is read (proc/py-frames.h).
 *
 * A process is looked at the first time one of its samples arrives (and
 * again after an exec): one that maps a python file and exports
 * _PyRuntime of a version with a layout is named to the program. A sample
 * with no record of its own keeps its native frames, and is counted.
 *
 * Ownership: py_samples_new() returns a heap object freed by
 * py_samples_free(); it borrows the registry, which must outlive it.
 */
#ifndef RECCE_PROFILE_PY_SAMPLES_H
#define RECCE_PROFILE_PY_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_registry;
struct py_samples;

struct py_samples_stats {
	size_t processes;   /* CPython processes sampled */
	uint64_t matched;   /* their samples that carry Python frames */
	uint64_t native;    /* ...of a thread running no Python code (a C thread) */
	uint64_t unmatched; /* ...with no record of their own: native frames only */
	uint64_t cut;	    /* chains cut short (too deep, or a read failed) */
	uint64_t unread;    /* frames whose code object could not be read */
	uint64_t unplaced;  /* samples shown without them: resolver_python_unplaced() */
	uint64_t dropped;   /* records the program's ring had no room for */
	char version[32];   /* of the first CPython sampled, "3.11.2" */
};

/* Loads the program (sampling one sample every period_ns of CPU time);
 * with a family map (family_fd >= 0, pick-bpf.h) it writes only the
 * samples of the processes in it. On failure the verifier's log, if any,
 * is left in log. Returns 0 or -errno (-EPERM: no CAP_BPF). */
int py_samples_new(struct proc_registry *procs, uint64_t period_ns, int family_fd,
		   struct py_samples **out, char *log, size_t log_len);
void py_samples_free(struct py_samples *p);

/* The program, for the sampling events (perf_events_config). */
int py_samples_prog_fd(const struct py_samples *p);

/* Looks at process pid now (read into the registry already), rather
 * than at its first sample. */
void py_samples_watch(struct py_samples *p, pid_t pid);

/* Every process whose program's path holds "python" (proc/select.h), read into the
 * registry and looked at now, before the events of a recording of every
 * process open, so that its first samples have their Python frames
 * (another CPython, such as a program embedding libpython, is looked at
 * its first sample); scanned(arg, pid) for each one read. */
void py_samples_watch_named(struct py_samples *p, void (*scanned)(void *arg, pid_t pid), void *arg);

/* Whether pid was found a CPython (by py_samples_watch(), or at a
 * sample). */
int py_samples_is_python(struct py_samples *p, pid_t pid);

/* pid exec'd: looked at again at its next sample. */
void py_samples_exec(struct py_samples *p, pid_t pid);

/* Thread tid ended: its records left are dropped. */
void py_samples_thread_exit(struct py_samples *p, pid_t tid);

/* Reads the records written until now, naming their frames while their
 * processes live (py_samples_stack() reads them too, when a sample's is
 * not read yet). */
void py_samples_read(struct py_samples *p);

/* The stack of a sample (cpu-clock, or a switch off the CPU) of tid (of pid) at time, its native
 * frames given (n of them): with its Python frames after them, in a
 * buffer of p's valid until the next call, or frames itself when it has
 * none. Sets *nout. */
const uint64_t *py_samples_stack(struct py_samples *p, pid_t pid, pid_t tid, uint64_t time,
				 const uint64_t *frames, size_t n, size_t *nout);

/* The stack of thread tid of pid found waiting as the recording starts
 * (read from /proc, frames, n of them): with the Python frames it waits
 * in, read from the process now (a thread that waits holds them still),
 * in a buffer of p's valid until the next call; frames itself when it
 * has none. The threads of pid are read once for all its threads; pid 0
 * ends that. */
const uint64_t *py_samples_waiting(struct py_samples *p, pid_t pid, pid_t tid,
				   const uint64_t *frames, size_t n, size_t *nout);

/* The Python name (threading.Thread.name) of thread tid of pid, a
 * CPython, at now (CLOCK_MONOTONIC ns): read from the process with its
 * other threads' the first time, and again for a thread not known then
 * (not more often than every 200 ms); NULL for a thread without one (the
 * main thread, a C thread) or another process. *found says whether the
 * thread was among the process's Python threads (a NULL then is final).
 * Valid until the next call. */
const char *py_samples_thread_name(struct py_samples *p, pid_t pid, pid_t tid, uint64_t now,
				   int *found);

void py_samples_get_stats(struct py_samples *p, struct py_samples_stats *st);

/* The layout a BPF program reads a CPython's frames by (perf/py-format.h),
 * from the chain its reader found (proc/py-frames.h): shared with the
 * probes of `trace py:` (trace/py-stack.h). */
struct py_chain;
struct py_bpf_layout;
void py_samples_layout(const struct py_chain *c, struct py_bpf_layout *L);

/* One frame as those programs write it (four words: code object with
 * PY_FRAME_* bits, instruction, module or globals, qualified name),
 * named by reader r: what py_reader_frame() returns. */
struct py_reader;
struct py_frame;
int py_samples_frame(struct py_reader *r, const uint64_t fr[4], struct py_frame *f);

#endif
