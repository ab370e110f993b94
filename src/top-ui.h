/*
 * What the two faces of `recce top` share: the session cmd-top.c sets up
 * (model, sampler, /proc reader, the watched processes) and the calls
 * that the batch printer (top-batch.c) and the screen (top-tui.c) make
 * on it. These are program-side files: they may print.
 */
#ifndef RECCE_TOP_UI_H
#define RECCE_TOP_UI_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "procstat.h"
#include "top-model.h"
#include "top-sample.h"

#define TOP_MAX_EVENTS 16 /* event lines kept per snapshot */

struct top_session {
	/* options */
	pid_t *pids; /* watched processes; npids == 0 means every process */
	size_t npids;
	double delay;	 /* seconds between snapshots */
	long long count; /* snapshots to show; 0 = until quit */
	unsigned freq;
	unsigned history;
	int batch, json;

	/* state */
	struct procstat_reader reader;
	struct top_model *model;
	struct top_sampler *sampler; /* NULL when sampling was refused */
	char sampling_off[256];	     /* why, when sampler is NULL */
	unsigned char *alive;	     /* per pid: still running */
	size_t nalive;
	pid_t *scratch_pids; /* copy of a listing of every process */
	size_t scratch_cap;
	double last_time; /* CLOCK_MONOTONIC seconds of the latest snapshot */
	long long shown;
	char events[TOP_MAX_EVENTS][128]; /* "process 42 exited" */
	size_t nevents;
};

/* Seconds on CLOCK_MONOTONIC. */
double top_now(void);

/* Waits until the next snapshot is due, draining the rings meanwhile;
 * returns early (1) when fd (if >= 0) becomes readable, 0 at the due time,
 * -1 when interrupted by a stop signal. */
int top_session_wait(struct top_session *s, int fd);

/* Reads /proc and the rings and finishes a snapshot. Returns 0 or -errno. */
int top_session_snapshot(struct top_session *s);

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
