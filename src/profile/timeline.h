/*
 * Sample timelines: the time, thread and weight of every sample of a
 * recording, kept beside the aggregated profile so that time-ordered views
 * (speedscope's time order, Chrome traces) show what happened when, rather
 * than an order made up from merged stacks.
 *
 * The encoding is compact: a sample is the index of the aggregated sample
 * it was counted in (which names its thread, through the sample's tid
 * label, and its stack), the time since the previous event and its period
 * as the change from the previous period, each a varint, the last two
 * zig-zag encoded. A busy thread sampled at 99 Hz costs about 6 bytes a
 * sample before the file's gzip, 2-3 after it.
 *
 *   varint version (1)
 *   varint count
 *   count x { varint index, zigzag varint dt_ns, zigzag varint dperiod_ns }
 *
 * Times start at the start of the recording (the first dt counts from 0);
 * events are in time order. recce stores the bytes in a field of the pprof
 * Profile message that pprof itself does not define (see pprof.h), which
 * other readers skip.
 *
 * Ownership: a timeline_writer is initialised and released by the caller
 * and owns its buffer until timeline_writer_take(); timeline_decode()
 * returns a heap array the caller frees with free().
 */
#ifndef RECCE_TIMELINE_H
#define RECCE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_VERSION 1

struct timeline_event {
	uint64_t index;	 /* of the sample (or, while recording, the stack) */
	int64_t time_ns; /* since the start of the recording */
	int64_t period;	 /* CPU ns this sample stands for */
};

/* Events being appended. The encoded count comes first, so the events are
 * buffered without it and timeline_writer_take() puts the header in
 * front. */
struct timeline_writer {
	unsigned char *buf;
	size_t len, cap, max; /* max: bytes at most; 0 for no limit */
	uint64_t count;
	uint64_t dropped; /* events refused because max was reached */
	int64_t last_time, last_period;
};

/* max bounds the buffer (0: unbounded): past it events are counted in
 * dropped, not stored. */
void timeline_writer_init(struct timeline_writer *w, size_t max);
void timeline_writer_release(struct timeline_writer *w);

/* Appends one event. Returns 0, -ENOBUFS when max is reached (the event is
 * counted in dropped), -ENOMEM. */
int timeline_writer_add(struct timeline_writer *w, uint64_t index, int64_t time_ns, int64_t period);

/* The encoded timeline (header and events) in a heap buffer the caller
 * frees with free(). The writer is left empty. Returns 0 or -ENOMEM. */
int timeline_writer_take(struct timeline_writer *w, unsigned char **buf, size_t *len);

/*
 * Decodes an encoded timeline; every index must be below nindex. Returns
 * 0 and a heap array of *n events (NULL when there are none), -EBADMSG for
 * a malformed timeline (an index out of range, a truncated varint, a count
 * that does not match the bytes), -ENOMEM.
 */
int timeline_decode(const unsigned char *buf, size_t len, uint64_t nindex,
		    struct timeline_event **events, size_t *n);

/*
 * Re-encodes events, keeping only those whose index has a non-zero entry in
 * remap and replacing the index by remap[index] - 1, in time order (events
 * at the same time in the order given): the timeline of a profile whose
 * samples were filtered or renumbered. Returns 0 or -ENOMEM.
 */
int timeline_remap(const struct timeline_event *events, size_t n, const uint64_t *remap,
		   unsigned char **buf, size_t *len);

#endif
