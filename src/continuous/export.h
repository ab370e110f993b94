/*
 * Shipping the continuous agent's windows to the fleet store beside the
 * sampling: each window, or batch of windows, goes in a process of its own, forked with the
 * window in memory, so that a fleet store that is slow, away or
 * unreachable never holds up the loop that samples (a window that waits
 * on ClickHouse for its whole timeout costs the sampler a fork). The
 * process tells what it did on a pipe the loop watches: its error and
 * the stacks it sent, which the agent's ClickHouse object learns, so
 * that a stack still crosses the network about once.
 *
 * At most EXPORT_PROCESSES at once: a window that finds them all busy is
 * not sent, and is reported as failed (-EBUSY). Each has
 * EXPORT_DEADLINE_S to finish, or it is ended and its window failed
 * (-ETIMEDOUT).
 *
 * Ownership: exporter_new() returns a heap object freed with
 * exporter_free(), which waits for the processes still running (each
 * within its deadline) and reports them, so that the last window of a
 * stopping agent is sent too. The ClickHouse object and the loop must
 * outlive it.
 */
#ifndef RECCE_CONTINUOUS_EXPORT_H
#define RECCE_CONTINUOUS_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "store/clickhouse.h"
#include "store/store.h"
#include "util/evloop.h"

#define EXPORT_PROCESSES  4
#define EXPORT_DEADLINE_S 30

/* What became of the n windows that start at start_ns[0..n), sent
 * together: err 0 when ClickHouse took them, else -errno and why in
 * words (ClickHouse's answer, or what failed). */
typedef void (*export_done_fn)(void *arg, const int64_t *start_ns, size_t n, int err,
			       const char *why);

struct exporter;

/* Returns 0, or -errno (-ENOMEM, or the shared lock's mmap). */
int exporter_new(struct clickhouse *ch, struct evloop *loop, export_done_fn done, void *arg,
		 struct exporter **out);

/* The most windows one process sends. */
#define EXPORT_BATCH_MAX 60

/* Sends windows ws[0..nw) (as clickhouse_export() takes them, nw at
 * most EXPORT_BATCH_MAX; with again, as CLICKHOUSE_AGAIN says, for
 * windows that may be there already) from a process of its own; done is
 * called once it has ended. 0 when it was started; -EBUSY
 * (every process busy), -EINVAL (too many) or a fork's -errno, done
 * having been called. */
int exporter_send(struct exporter *x, const struct clickhouse_window *ws, size_t nw, int again);

/* What retention (clickhouse_set_retain()) did, in the export that ran
 * it (once a day): the first day it kept, the partitions it dropped,
 * and why it failed (NULL: it did not). */
typedef void (*export_retained_fn)(void *arg, const char *cutoff, int dropped, const char *why);

/* Calls fn, with exporter_new()'s arg, when an export ran retention. */
void exporter_on_retained(struct exporter *x, export_retained_fn fn);

/* How many processes are free to send a window. */
size_t exporter_room(const struct exporter *x);

/* Whether the window that starts at start_ns is being sent. */
int exporter_sending(const struct exporter *x, int64_t start_ns);

void exporter_free(struct exporter *x);

#endif
