/*
 * The per-CPU ring buffers of perf_event_open(2), shared by cpu-clock
 * sampling (perf-events.c) and call tracing (uprobe.c): mapping a ring,
 * reading its records with the wraparound copied through a bounce buffer,
 * and merging the records of several rings in timestamp order.
 *
 * A reader owns one struct perf_ring per CPU. perf_rings_read() makes one
 * pass over all of them: it asks the caller to parse each ring's next
 * record (ops->parse, which keeps the parsed form in its own per-ring slot
 * and reports the record's time), then hands the oldest parsed record to
 * ops->handle, until every ring is drained or handle asks to stop. A
 * record that parse declines or rejects is consumed at once; a record
 * peeked but not handled stays in the ring for the next pass.
 *
 * Every header is bounds-checked: a size the kernel could not have written
 * ends the pass over that ring (the rest is skipped and counted as
 * malformed) rather than being trusted.
 *
 * Ownership: struct perf_ring is a caller-allocated value; perf_ring_init()
 * it, perf_ring_map() gives it an event descriptor to own, and
 * perf_ring_release() unmaps the ring and closes that descriptor.
 */
#ifndef RECCE_PERF_RING_H
#define RECCE_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_mmap_page;

struct perf_ring {
	int fd; /* the event that owns the buffer */
	struct perf_event_mmap_page *meta;
	size_t map_len;
	const unsigned char *data;
	uint64_t size;	       /* power of two */
	uint64_t head;	       /* snapshot for this pass */
	uint64_t tail;	       /* our read position: the start of the next unhandled record */
	uint64_t next;	       /* when peeked: the position after the peeked record */
	uint64_t time;	       /* when peeked: the peeked record's time */
	int peeked;	       /* the caller's slot for this ring holds the next record */
	unsigned char *bounce; /* a whole record, when it wraps around the end */
};

/* Counters a pass adds to. */
struct perf_ring_counts {
	uint64_t malformed; /* records skipped because they failed a bounds check */
	uint64_t wraps;	    /* records copied through the bounce buffer */
};

struct perf_ring_ops {
	/* Parses the record of len bytes at rec (8-byte aligned, whole) of
	 * ring index ring into the caller's slot for that ring. Returns 1
	 * and sets *time for a record to handle in time order, 0 for one to
	 * skip, or a negative errno for a malformed one (skipped, counted). */
	int (*parse)(void *ctx, size_t ring, const unsigned char *rec, size_t len, uint64_t *time);
	/* Handles the record parse left in ring's slot. Non-zero stops the
	 * pass; the record counts as read. */
	int (*handle)(void *ctx, size_t ring);
};

void perf_ring_init(struct perf_ring *r);

/*
 * Maps the ring of the event fd, which r then owns (closed on failure too):
 * pages data pages (a power of two), halved down to min_pages while the
 * kernel refuses for lack of locked memory (an unprivileged user is limited
 * by kernel.perf_event_mlock_kb). Returns 0 or -errno.
 */
int perf_ring_map(struct perf_ring *r, int fd, size_t pages, size_t min_pages);
void perf_ring_release(struct perf_ring *r);

/*
 * One pass over n rings in time order (see above), handling records up to
 * time until (UINT64_MAX: all); later ones stay for the next pass. The
 * heads are taken one ring after another, so a record written between
 * two of them may be newer than one a later ring holds: a thread that
 * moved to another CPU (or a goroutine to another thread) can have its
 * return read before its call. Taken before the pass starts, the time
 * until orders them: a record read is handled only once every record
 * written before it is in view.
 */
int perf_rings_read(struct perf_ring *rings, size_t n, uint64_t until,
		    const struct perf_ring_ops *ops, void *ctx, struct perf_ring_counts *counts);

#endif
