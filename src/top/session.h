/*
 * A session of `recce top`: the watched processes, the /proc reader, the
 * model and the sampler, and the wait-read-snapshot cycle that the batch
 * printer and the screen (src/cli/top-batch.c, top-tui.c) both drive.
 * It never prints: the program shows what a snapshot holds.
 *
 * Ownership: the caller owns the struct and its pids array; the session
 * owns what top_session_init sets up, until top_session_release.
 */
#ifndef RECCE_TOP_SESSION_H
#define RECCE_TOP_SESSION_H

#include <stddef.h>
#include <sys/types.h>

#include "proc/procstat.h"
#include "top/top-model.h"
#include "top/top-sample.h"
#include "util/evloop.h"

#define TOP_MAX_EVENTS 16 /* event lines kept per snapshot */

struct top_session {
	/* options */
	pid_t *pids; /* watched processes; npids == 0 means every process */
	size_t npids;
	double delay;	 /* seconds between snapshots */
	long long count; /* snapshots to show; 0 = until quit */
	unsigned freq;
	unsigned history;
	int dwarf, fp_after; /* how stacks are walked (top-sample.h) */
	uint32_t stack_bytes;
	int copy_grows;	    /* the copy grows where stacks end at it (perf/stack-copy.h) */
	uint32_t copy_said; /* the copy last said */
	int batch, json; /* how the program shows it */
	int stop_fd;	 /* readable on a stop signal (a signalfd); -1: none */

	/* state */
	struct procstat_reader reader;
	struct top_model *model;
	struct top_sampler *sampler; /* NULL when sampling was refused */
	int sampling_err;	     /* why, when sampler is NULL */
	char sampling_off[256];	     /* the program's words for it */
	unsigned char *alive;	     /* per pid: still running */
	size_t nalive;
	struct evloop loop; /* the rings, stop_fd and the screen's input */
	int input_fd;	    /* the input in the loop, -1 before the first */
	int stopped, input_ready;
	pid_t *scratch_pids; /* copy of a listing of every process */
	size_t scratch_cap;
	double last_time; /* CLOCK_MONOTONIC seconds of the latest snapshot */
	long long shown;
	char events[TOP_MAX_EVENTS][128]; /* "process 42 exited" */
	size_t nevents;
};

/* Seconds on CLOCK_MONOTONIC. */
double top_now(void);

/* Sets up the /proc reader, the model and the sampler of a session whose
 * options are filled. Returns 0 or -errno; a sampler the kernel refuses
 * is no error: s->sampler stays NULL and s->sampling_err says why. */
int top_session_init(struct top_session *s);
void top_session_release(struct top_session *s);

/* Waits until the next snapshot is due, draining the rings meanwhile;
 * returns early (1) when fd (if >= 0, the same on every call) becomes
 * readable or a signal handler ran (the screen's SIGWINCH), 0 at the due
 * time, -1 once stop_fd has become readable. */
int top_session_wait(struct top_session *s, int fd);

/* Reads /proc and the rings and finishes a snapshot. Returns 0 or -errno. */
int top_session_snapshot(struct top_session *s);

#endif
