/*
 * Which librecce span each thread of a program was in, and which sequence
 * token it carried, at every moment of a recording: built from the events
 * of its rings as they are drained, so that `recce record` can label each
 * sample with the span it fell in and the trace id of its request.
 *
 * Truth, not guesses. Events the writer overwrote before they were read
 * leave a window in which a thread's state is not known: a sample there is
 * answered SPAN_UNKNOWN, never with the span before or after. A record of
 * librecce carries its thread's state after it (RECCE_FLAG_STATE: spans
 * open, token carried), so the state is known again at the next record
 * read; a span whose begin was lost is known from then on, and named when
 * its end is read (until then: SPAN_UNKNOWN). Records of an older writer,
 * without the state, leave the thread unknown from a loss to the end.
 *
 * Bounded: at most SPAN_TRACK_MAX spans and token changes in all; past
 * that, every thread is unknown from the time the track filled
 * (span_track_full says when).
 *
 * Ownership: span_track_new() returns a heap object released with
 * span_track_free(); it keeps its own copy of every name.
 */
#ifndef RECCE_EVENTS_SPAN_TRACK_H
#define RECCE_EVENTS_SPAN_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "events/ring-read.h"

#define SPAN_TRACK_MAX 2000000u

enum span_state {
	SPAN_NONE,    /* in no span; for a token: carries none */
	SPAN_KNOWN,   /* in the span named (the innermost); carries the token whose id is given */
	SPAN_UNKNOWN, /* not known: events were lost, or the name is not */
};

struct span_at {
	enum span_state span;
	const char *name; /* SPAN_KNOWN: the innermost span's name, the track's copy */
	enum span_state token;
	uint64_t id_hi, id_lo; /* token SPAN_KNOWN: the trace id */
};

struct span_track;

struct span_track *span_track_new(void);
void span_track_free(struct span_track *t);

/*
 * Takes the events of one drain of r (in the order the drain gave them),
 * the reader of process number source (any small number naming the
 * process among those fed). r's per-thread losses tell where events were
 * lost. Returns 0 or -ENOMEM (the track is then full: see above).
 */
int span_track_feed(struct span_track *t, unsigned source, const struct ring_reader *r,
		    const struct ring_event *ev, size_t n);

/* After the last drain of r: a thread that lost events after its last one
 * read, or every one, is unknown from there to the end. */
int span_track_end(struct span_track *t, unsigned source, const struct ring_reader *r);

/* r's file could not be read on: every thread it holds is unknown from
 * its last event read (or realtime_ns) to the end. */
int span_track_stop(struct span_track *t, unsigned source, const struct ring_reader *r,
		    uint64_t realtime_ns);

/* The state of thread tid at realtime_ns (CLOCK_REALTIME ns). A thread the
 * track never saw is in no span and carries no token. */
void span_track_at(const struct span_track *t, int32_t tid, uint64_t realtime_ns,
		   struct span_at *out);

/* 0, or the realtime ns from which nothing is known because the track was
 * full. */
uint64_t span_track_full(const struct span_track *t);

/* Spans seen (begun or ended) in all. */
uint64_t span_track_spans(const struct span_track *t);

#endif
