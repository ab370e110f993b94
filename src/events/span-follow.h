/*
 * Following the librecce spans of processes while they are recorded: their
 * event files found in their mappings, drained into a span track every
 * 50 ms from a timer in the caller's loop (a thread's ring holds 8,192
 * events by default, so a thread loses none below about 160,000 events a
 * second), once more at the end. A process that maps no event file yet
 * (it has written no event) is looked for again every 200 ms.
 *
 * Ownership: span_follow_new() returns a heap object released with
 * span_follow_free(), which owns its readers and its track.
 */
#ifndef RECCE_EVENTS_SPAN_FOLLOW_H
#define RECCE_EVENTS_SPAN_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/span-track.h"

struct evloop;
struct span_follow;

struct span_follow_stats {
	size_t files;	 /* processes whose event file was read */
	uint64_t events; /* events read */
	uint64_t lost;	 /* events overwritten before they were read */
	uint64_t spans;	 /* spans begun or ended among them */
	int err;	 /* 0, or the first error reading a file (-EBADMSG, -ENOMEM) */
	pid_t err_pid;	 /* whose */
	int err_opening; /* 1: it came looking for the file (-EACCES), none was read */
};

/* Follows pids[0..n) (copied). Returns 0 or -ENOMEM. */
int span_follow_new(const pid_t *pids, size_t n, struct span_follow **out);

/* Opens what can be opened now, and drains every 50 ms from a timer of
 * loop. Returns 0 or -ENOMEM. */
int span_follow_attach(struct span_follow *f, struct evloop *loop);

/* After the loop: a last drain, and the losses after it. */
void span_follow_finish(struct span_follow *f);

const struct span_track *span_follow_track(const struct span_follow *f);
void span_follow_get_stats(const struct span_follow *f, struct span_follow_stats *st);

void span_follow_free(struct span_follow *f);

#endif
