/*
 * Merged sequences (seq-merge.h) as people and tools read them: text, a
 * Mermaid sequenceDiagram (one arrow a message, in serial order, notes
 * where a token began and ended), or a Chrome/Perfetto trace where each
 * message is a flow arrow from its send to its receive.
 */
#ifndef RECCE_EVENTS_SEQ_PRINT_H
#define RECCE_EVENTS_SEQ_PRINT_H

#include <stdio.h>

#include "events/seq-merge.h"

enum seq_format {
	SEQ_TEXT,
	SEQ_MERMAID,
	SEQ_CHROME,
};

/*
 * What a profile recorded meanwhile holds of each process while it
 * carried a trace's token (recce record labels samples by trace id): for
 * `seq --profile`, shown under each trace, with the command that draws
 * that hop's samples.
 */
struct seq_cost {
	uint64_t id_hi, id_lo; /* the trace */
	int32_t pid;
	int64_t value; /* in the unit below */
	uint64_t samples;
};

struct seq_costs {
	const struct seq_cost *v; /* sorted by trace id, then pid */
	size_t n;
	const char *type, *unit; /* of value: "cpu", "nanoseconds" */
	const char *profile;	 /* the file, for the command shown */
};

/* costs: NULL for none. */
void seq_print(FILE *out, enum seq_format f, const struct seq_source *src, size_t nsrc,
	       const struct seq_result *res, const struct seq_costs *costs);

#endif
