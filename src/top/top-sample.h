/*
 * The sampling side of `recce top`: cpu-clock samples of every process,
 * taken by one event per CPU for the whole system (pid -1, which the
 * kernel allows to root, CAP_PERFMON, or at perf_event_paranoid <= 0),
 * filtered down to the watched processes (in the kernel where BPF may
 * run), named, and handed to the top
 * model with their raw stacks.
 *
 * System-wide events cost two descriptors on a two-CPU machine whatever
 * the number of threads watched, and see threads and processes the moment
 * they run, so a thread created mid-interval is sampled from its start.
 *
 * Naming. The function of a sample is the innermost function of the
 * program's own code (the first user-space frame, inlined frames
 * included); a sample with no user frame (a kernel thread) is named by
 * its kernel function. Names are interned: equal names are one pointer,
 * valid until top_sampler_free(). A process's mappings are read from
 * /proc the first time one of its samples arrives, then kept current
 * from the rings' mmap and exec records; addresses are named once per
 * process and cached.
 *
 * Ownership: top_sampler_new() returns a heap object freed by
 * top_sampler_free(); strings it returns live as long as it.
 */
#ifndef RECCE_TOP_SAMPLE_H
#define RECCE_TOP_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct top_model;
struct top_sampler;

struct top_sampler_config {
	unsigned freq; /* samples per second of CPU time */
	/* How stacks are walked (sampling/sampler.h): the copied stack
	 * unwound (dwarf, stack_bytes a sample), then frame pointers
	 * (fp_after); with neither, frame pointers alone. */
	int dwarf, fp_after;
	uint32_t stack_bytes;
	int copy_grows;	   /* the copy grows where stacks end at it (perf/stack-copy.h) */
	const pid_t *pids; /* the processes watched; npids == 0 watches all */
	size_t npids;
};

struct top_sampler_stats {
	uint64_t samples, lost, throttled;
	uint64_t others; /* of processes not watched, read and dropped */
	int user_only; /* the kernel refused kernel-mode sampling */
	uint32_t copy_bytes; /* the stack each sample copies now (dwarf) */
};

/* One frame of a named stack. */
struct top_frame {
	const char *function; /* never NULL */
	const char *file;     /* NULL if unknown */
	int line;	      /* 0 if unknown */
	int kernel;
};

/* Opens the events. Returns 0 and *out, or -EACCES when the kernel
 * refuses system-wide sampling, -EMFILE, -ENOMEM, -errno. */
int top_sampler_new(const struct top_sampler_config *cfg, struct top_sampler **out);
void top_sampler_free(struct top_sampler *s);

/* Descriptors to poll(2) for POLLIN (one per CPU); returns the count. */
size_t top_sampler_pollfds(const struct top_sampler *s, int *fds, size_t max);

/* Moves every sample now in the rings into m. Returns the number of
 * records read or -errno. */
int top_sampler_read(struct top_sampler *s, struct top_model *m);

/* A watched process exited: its samples are no longer taken. */
void top_sampler_forget(struct top_sampler *s, pid_t pid);

/* Names the raw stack of a sample of pid (leaf first, PERF_CONTEXT_*
 * markers included), inlined frames expanded: fills at most max frames,
 * leaf first, and returns how many. */
size_t top_sampler_name_stack(struct top_sampler *s, pid_t pid, const uint64_t *frames,
			      size_t nframes, struct top_frame *out, size_t max);

void top_sampler_get_stats(const struct top_sampler *s, struct top_sampler_stats *st);

/* The Python name of thread tid of pid when it is a CPython's
 * threading.Thread (py_samples_thread_name()), else NULL. */
const char *top_sampler_thread_name(struct top_sampler *s, pid_t pid, pid_t tid);

#endif
