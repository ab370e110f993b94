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

void seq_print(FILE *out, enum seq_format f, const struct seq_source *src, size_t nsrc,
	       const struct seq_result *res);

#endif
