/*
 * The windows the fleet store has not taken yet, sent again oldest
 * first. Every window the agent writes is marked in its local store as
 * not yet taken by the fleet store (store_write's unsent_to), in the
 * transaction that writes it, and unmarked when ClickHouse has taken it;
 * so a window whose export failed, timed out, or whose answer was lost
 * with the profiler that waited for it, is still marked when the agent
 * runs again. Once an export goes through, backlog_pump() reads the
 * oldest marked windows back from the store and sends them again
 * (CLICKHOUSE_AGAIN: a window already there is not sent twice),
 * while keeping one exporting process free for the next fresh window.
 * The backlog is bounded by the store's retention: a window deleted
 * before it was taken is lost to the fleet store, and counted.
 *
 * Ownership: the caller owns the store and the exporter, which outlive
 * the calls.
 */
#ifndef RECCE_CONTINUOUS_BACKLOG_H
#define RECCE_CONTINUOUS_BACKLOG_H

#include <stddef.h>

#include "continuous/export.h"
#include "store/store.h"

/* Starts sending again the oldest windows dest has not taken and that
 * are not being sent already, batch of them (1 to EXPORT_BATCH_MAX) a
 * process, while more than one exporting process is free; a last batch
 * of fewer only with flush. Returns how many processes it started, or
 * -errno (the store could not be read). */
int backlog_pump(struct store *s, struct exporter *x, const char *dest, size_t batch, int flush);

/* How many windows dest has not taken, or -errno. */
int64_t backlog_count(struct store *s, const char *dest);

#endif
