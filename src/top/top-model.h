/*
 * The model behind `recce top`: one snapshot per interval, built from the
 * tasks /proc listed (procstat) and the samples the rings gave, and a
 * history of the samples of the last N intervals for the stack view and
 * the flamegraph.
 *
 * An interval goes: top_model_begin(), top_model_add_task() for every
 * task read, top_model_add_sample() for every sample (in any order with
 * the tasks, and possibly before begin: samples always go to the interval
 * being filled), top_model_end(). Then the rows, the header and the
 * stacks of that snapshot can be read until the next top_model_end().
 *
 * Rows are threads, or processes (the sum of their threads) when the
 * model is made with by_process. A row's rates (CPU %, context switches
 * per second) compare it with the row of the same task in the previous
 * snapshot, matched by id and start time: a reused TID is a new row,
 * never an old one with a stale name. A row first seen in this snapshot
 * counts from its start (a thread born during the interval) or from zero.
 *
 * Function names given with samples are compared by pointer: the caller
 * interns them, and they must outlive the model.
 *
 * Memory: buffers grow to the largest interval seen and are reused;
 * nothing is allocated per sample once they have grown. Samples beyond
 * TOP_MAX_SAMPLES in one interval are dropped and counted.
 *
 * Ownership: top_model_new() returns a heap object freed by
 * top_model_free(). Rows, views and stacks point into the model and are
 * valid until the next top_model_end() (views: until the next view).
 */
#ifndef RECCE_TOP_MODEL_H
#define RECCE_TOP_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/procstat.h"

#define TOP_MAX_SAMPLES	    (1u << 20) /* per interval */
#define TOP_MAX_FRAMES	    128	       /* per sample */
#define TOP_MAX_HISTORY	    120	       /* intervals of stacks kept */
#define TOP_DEFAULT_HISTORY 10

enum top_sort {
	TOP_SORT_CPU,
	TOP_SORT_MEM,
	TOP_SORT_NAME,
};

/* Thread mode: the row of a process's threads that ended during the
 * interval (add_ended_rows() in top-model.c), under this TID and name. */
#define TOP_ENDED_TID  0
#define TOP_ENDED_NAME "[ended threads]"

struct top_row {
	pid_t pid, tid; /* tid == pid for a process row; TOP_ENDED_TID */
	char name[PROCSTAT_COMM_LEN];
	char state;
	double cpu_user, cpu_sys;     /* percent of one CPU over the interval */
	double vcsw_rate, ivcsw_rate; /* context switches per second */
	uint64_t rss_kb;	      /* of the process */
	long nthreads;		      /* live threads of the row (0 for ended ones) */
	uint32_t samples;	      /* this interval */
	const char *hot;	      /* the function with most samples; NULL if none */
	double hot_share;	      /* its share of the row's samples, 0..1 */
	const char *last;	      /* the function at the latest sample ever; NULL if none */

	/* private: cumulative counters, for the next interval's rates */
	uint64_t starttime, ticks_user, ticks_sys, vcsw, ivcsw;
	uint64_t read_ns;   /* when the ticks were read (0: at the snapshot) */
	uint64_t last_time; /* time of the sample that set last */
};

struct top_cpu_use {
	double busy, user, sys; /* percent */
};

struct top_header {
	double uptime, load[3];
	uint64_t mem_total_kb, mem_available_kb;
	size_t ncpus;
	const struct top_cpu_use *cpus; /* ncpus entries */
	struct top_cpu_use all;		/* every CPU together, percent of the machine */
	double interval;		/* seconds */
	double cpu;			/* the rows' CPU %, summed */
	uint64_t rss_kb;		/* the rows' processes' RSS, summed */
	size_t threads, processes;
	double csw_rate; /* the rows' context switches per second */
	double self_cpu; /* recce's own CPU % */
	uint64_t samples, dropped;
};

struct top_model_config {
	int by_process;	  /* rows are processes */
	unsigned history; /* intervals of stacks kept (1..TOP_MAX_HISTORY) */
	long ticks_per_s; /* sysconf(_SC_CLK_TCK) */
	long page_kb;	  /* page size in KiB */
};

/* A distinct call stack of a row with its number of samples; frames are
 * raw addresses, leaf first, PERF_CONTEXT_* markers included. */
struct top_stack {
	uint32_t count;
	pid_t pid; /* the process whose addresses these are */
	uint32_t nframes;
	const uint64_t *frames;
};

struct top_model;

int top_model_new(const struct top_model_config *cfg, struct top_model **out);
void top_model_free(struct top_model *m);

/* Starts filling a snapshot: interval is the seconds since the previous
 * one (its rates divide by it). */
void top_model_begin(struct top_model *m, double interval);

/* A task read from /proc. Returns 0 or -ENOMEM. A row's rates divide by
 * the time between its two reads (t->read_ns), not by the snapshot's
 * interval: under load, reading hundreds of threads takes long, and the
 * ticks of one read must not be divided by the time of another. */
int top_model_add_task(struct top_model *m, const struct procstat_task *t);

/* The ticks of the whole process (procstat_read_process()). In process
 * mode its row then shows them instead of the sum of its live threads:
 * one read, and threads that exited during the interval still count; in
 * thread mode what its live threads do not account for is the row of its
 * ended threads. Processes may come in any order. Returns 0 or
 * -ENOMEM. */
int top_model_add_process(struct top_model *m, const struct procstat_task *t);

/* One sample: time orders samples for "last", function names where it
 * was (NULL if unknown), frames are kept for the stack views (at most
 * TOP_MAX_FRAMES). Returns 0, or -ENOSPC when the interval is full (the
 * sample is counted as dropped). */
int top_model_add_sample(struct top_model *m, pid_t pid, pid_t tid, uint64_t time,
			 const char *function, const uint64_t *frames, size_t nframes);

/* The machine as read this interval, and recce's own CPU ticks so far. */
void top_model_set_system(struct top_model *m, const struct procstat_system *sys,
			  uint64_t self_ticks);

/* Finishes the snapshot: rates, hot functions, totals. Returns 0 or
 * -ENOMEM. */
int top_model_end(struct top_model *m);

const struct top_header *top_model_header(const struct top_model *m);

/* The rows of the snapshot, ordered by pid and tid. */
size_t top_model_rows(const struct top_model *m, const struct top_row **rows);

/* The rows matching filter (a substring of the name, the hot or the last
 * function, or a pid or tid written in full; NULL or "" keeps all), sorted
 * by key: CPU and memory descending, name ascending, ties by tid. Returns
 * the count and *view, or -ENOMEM. */
ssize_t top_model_view(struct top_model *m, enum top_sort key, const char *filter,
		       const struct top_row *const **view);

/* Whether a row exists in the snapshot for pid/tid. */
const struct top_row *top_model_find(const struct top_model *m, pid_t pid, pid_t tid);

/* The distinct stacks of a row (tid == pid for a process row; in process
 * mode every thread of the process) over the last nintervals snapshots,
 * most samples first. Returns the number of distinct stacks (they are in
 * *stacks) or -ENOMEM; *total is the row's sample count. */
ssize_t top_model_stacks(struct top_model *m, pid_t pid, pid_t tid, unsigned nintervals,
			 const struct top_stack **stacks, uint64_t *total);

#endif
