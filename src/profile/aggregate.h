/*
 * Online aggregation of samples: one entry per distinct (pid, address-space
 * generation, tid, call stack), holding a sample count and the summed
 * sampling period (CPU nanoseconds). Memory grows with the number of
 * distinct stacks and threads, not with the length of the recording:
 * adding a sample of a stack already seen allocates nothing.
 *
 * Frames are raw addresses as the kernel or the unwinder gave them, leaf
 * first, PERF_CONTEXT_* markers included (resolve.c interprets them).
 *
 * Address-space generations: a process that calls exec gets new code at
 * the same addresses, so aggregate_exec() starts a new generation for its
 * pid and later samples never share an entry with earlier ones.
 *
 * Threads: the aggregator also keeps, per tid, its pid, its latest name
 * and its sample count, for the profile's labels and the summary.
 *
 * Timeline: when enabled, every sample added with a time also appends an
 * event (stack index, time, period) to a compact timeline (timeline.h), so
 * the order of samples survives the aggregation; that costs a few bytes a
 * sample, up to a cap, past which events are counted as dropped.
 *
 * Ownership: aggregate_new() returns a heap object freed by
 * aggregate_free(); entries live as long as it. A thread name returned by
 * aggregate_thread_name() is valid until the next call that may add a
 * thread (aggregate_add, aggregate_set_thread, aggregate_exec).
 */
#ifndef RECCE_AGGREGATE_H
#define RECCE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGG_COMM_LEN 64 /* a thread's name: the kernel's 16 bytes, or a Python thread's */

struct agg_stack {
	uint64_t count;	 /* samples */
	uint64_t period; /* summed period: CPU ns for cpu-clock */
	uint32_t pid, tid;
	uint32_t gen; /* address-space generation of pid */
	uint32_t nframes;
	uint32_t resolved; /* free for the resolver's use: set once turned into a profile sample */
	uint32_t index;	   /* position in insertion order (aggregate_stack()) */
	uint64_t frames[]; /* leaf first */
};

struct aggregate_stats {
	uint64_t samples;
	uint64_t period;
	size_t stacks;	/* distinct entries */
	size_t threads; /* threads with at least one sample */
	size_t bytes;	/* memory held: arena chunks and tables */
};

struct aggregate;

struct aggregate *aggregate_new(void);
void aggregate_free(struct aggregate *a);

/* Adds one sample of period to the entry of (pid, its current generation,
 * tid, frames). Returns 0 or -ENOMEM (the sample is then not counted). */
int aggregate_add(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		  uint64_t period);

/* Drops every entry and count (a window is over), keeping the threads
 * with their names and the processes' generations. */
void aggregate_clear(struct aggregate *a);

/* After aggregate_clear(), for an aggregator that lives for days (the
 * continuous agent): forgets each thread that had no sample in the
 * window just cleared and that gone(arg, pid, tid) says has exited, so
 * that its threads follow the living ones, not every thread it saw.
 * (A thread sampled in that window stays one more: its last samples may
 * still come.) Returns how many went; none when memory runs out. */
size_t aggregate_drop_threads(struct aggregate *a, int (*gone)(void *arg, pid_t pid, pid_t tid),
			      void *arg);
/* Keeps a timeline from now on, of at most max_bytes. */
void aggregate_enable_timeline(struct aggregate *a, size_t max_bytes);

/* aggregate_add(), and with a timeline enabled, an event at time_ns (since
 * the start of the recording) for the sample's stack. */
int aggregate_add_at(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames, size_t n,
		     uint64_t period, int64_t time_ns);

/* aggregate_add_at() of a sample that stands for count of them (an
 * allocation sample: the allocations it represents), with their summed
 * period. The aggregate's sample total grows by one. */
int aggregate_add_weighted(struct aggregate *a, pid_t pid, pid_t tid, const uint64_t *frames,
			   size_t n, uint64_t count, uint64_t period, int64_t time_ns);

/* The timeline kept so far (indexes of aggregate_stack()), NULL when not
 * enabled. */
struct timeline_writer *aggregate_timeline(struct aggregate *a);

/* pid replaced its address space: start a new generation. Returns 0 or
 * -ENOMEM. */
int aggregate_exec(struct aggregate *a, pid_t pid);

/* The current generation of pid (0 if never exec'd while watched). */
uint32_t aggregate_gen(const struct aggregate *a, pid_t pid);

/* How many entries pid's current generation has (so that a caller can skip
 * resolving a process that has none). */
uint64_t aggregate_gen_stacks(const struct aggregate *a, pid_t pid);

/* Entries in the order they first appeared; i < aggregate_nstacks(). */
size_t aggregate_nstacks(const struct aggregate *a);
struct agg_stack *aggregate_stack(struct aggregate *a, size_t i);

/* Records a thread and, if name is not NULL, its name (truncated to
 * AGG_COMM_LEN - 1 bytes). Returns 0 or -ENOMEM. */
int aggregate_set_thread(struct aggregate *a, pid_t pid, pid_t tid, const char *name);

/* The latest name of tid, or NULL if none is known. */
const char *aggregate_thread_name(const struct aggregate *a, pid_t tid);

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *st);

#endif
