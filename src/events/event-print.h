/*
 * Events as people and tools read them: aligned text (spans indented by
 * depth, each end with its duration), JSON (one object a line: kind,
 * name, tid, thread, time, ...), or a Chrome/Perfetto trace (spans as B
 * and E, events as instants, counters as C). Spans are paired per thread:
 * an end closes the latest open begin of its name.
 *
 * Ownership: the caller allocates the printer, event_printer_release()
 * frees what it holds; the reader must outlive it.
 */
#ifndef RECCE_EVENTS_EVENT_PRINT_H
#define RECCE_EVENTS_EVENT_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "events/ring-read.h"
#include "util/json-out.h"

enum event_format {
	EVENTS_TEXT,
	EVENTS_JSON,
	EVENTS_CHROME,
};

struct open_span {
	const char *name;
	uint64_t begin_ns;
};

struct span_stack {
	struct open_span *open;
	size_t n, cap;
};

struct event_printer {
	FILE *out;
	enum event_format format;
	const struct ring_reader *r;
	uint64_t zero_ns;	   /* times are printed from here */
	struct span_stack *stacks; /* per reader thread */
	size_t nstacks;
	size_t printed;
	struct json_out json; /* chrome: the document being written */
};

void event_printer_init(struct event_printer *p, FILE *out, enum event_format format,
			const struct ring_reader *r);
void event_printer_release(struct event_printer *p);

/* The heading (text) or the opening of the document (chrome). */
void event_printer_begin(struct event_printer *p);

/* Prints n events, in the order given. Returns 0 or -ENOMEM. */
int event_printer_put(struct event_printer *p, const struct ring_event *e, size_t n);

/* Closes the document (chrome). */
void event_printer_end(struct event_printer *p);

/* Before the reader is released to read the program the process ran
 * next (exec): names its threads (chrome) and forgets its open spans,
 * which ended unseen. Times go on from the same zero. */
void event_printer_end_program(struct event_printer *p);

/* The name of a kind as the JSON output spells it ("span_begin"). */
const char *event_kind_name(uint16_t kind);

#endif
