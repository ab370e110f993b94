/*
 * The two faces of `recce top` over one session (top/session.h): the
 * batch printer (top-batch.c) and the screen (top-tui.c). These are
 * program-side files: they may print.
 */
#ifndef RECCE_TOP_UI_H
#define RECCE_TOP_UI_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "top/session.h"

#define TOP_LINE_LEN 512

/* The header lines of the latest snapshot (machine, targets, "sampling
 * off", events): fills at most max lines, returns how many. */
size_t top_format_header(struct top_session *s, char (*lines)[TOP_LINE_LEN], size_t max);
/* The column titles, and one row, as text. */
void top_format_columns(const struct top_session *s, char *buf, size_t len);
void top_format_row(const struct top_session *s, const struct top_row *r, char *buf, size_t len);

/* Text and JSON snapshots for batch mode. */
void top_batch_print(struct top_session *s, FILE *out);

/* The interactive screen. Returns the exit status. */
int top_tui_run(struct top_session *s);

#endif
