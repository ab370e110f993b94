/*
 * Metrics per task type from librecce's task records (recce_task_create,
 * _start, _stop, _finish), as chroprof keeps them for Nim's Chronos loop:
 * tasks created, runs, execution time (total, longest run, a histogram of
 * runs), wall time from creation to finish, time ready but not running
 * (from creation or the last stop to the next start), and the execution
 * time of children, which counts for the parent's type even when the
 * child runs after its parent finished.
 *
 * Fed events in time order (ring_reader_drain's), from any number of
 * threads. A start of a task created before the reader attached has no
 * type: it is counted in `unknown`, not in any type.
 *
 * Ownership: the caller allocates the model; tasks_release() frees what
 * it holds. Type names point into the reader's pool.
 */
#ifndef RECCE_EVENTS_TASKS_H
#define RECCE_EVENTS_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "events/ring-read.h"
#include "util/u64map.h"

/* Upper bounds of the run-time histogram's buckets, in nanoseconds. */
#define TASK_BUCKETS 8
extern const uint64_t task_bucket_ns[TASK_BUCKETS];

struct task_type {
	const char *name;
	uint64_t created, finished, runs;
	uint64_t exec_ns, exec_max_ns, wall_ns, wait_ns, children_ns;
	uint64_t bucket[TASK_BUCKETS + 1]; /* runs up to each bound; the last: longer */
};

struct tasks {
	struct task_type *types;
	size_t ntypes, cap;
	struct u64map by_name; /* name pointer -> index + 1 */
	struct u64map live;    /* task id -> struct live_task * */
	uint64_t unknown;      /* records of tasks created before the reader came */
	size_t gone;	       /* finished tasks still in live as zeros */
};

void tasks_init(struct tasks *t);
void tasks_release(struct tasks *t);

/* Takes the task records among e[0..n). Returns 0 or -ENOMEM. */
int tasks_feed(struct tasks *t, const struct ring_event *e, size_t n);

/* Columns to sort by, largest first (by name for TASK_SORT_NAME). */
enum task_sort {
	TASK_SORT_EXEC,
	TASK_SORT_RUNS,
	TASK_SORT_MAX,
	TASK_SORT_AVG,
	TASK_SORT_WALL,
	TASK_SORT_WAIT,
	TASK_SORT_CHILDREN,
	TASK_SORT_CREATED,
	TASK_SORT_NAME,
};

/* Parses a column's name ("exec", "runs", ...); -1 if unknown. */
int task_sort_parse(const char *s);
const char *task_sort_name(enum task_sort by);

/* Fills order[0..ntypes) with type indices, sorted. */
void tasks_sorted(const struct tasks *t, enum task_sort by, size_t *order);

#endif
