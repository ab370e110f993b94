/*
 * The Chrome trace writer: a sample timeline as Trace Event JSON, which
 * chrome://tracing, Perfetto and speedscope open. One track per thread
 * (pid and tid from the samples' labels, named by the thread label), on
 * which consecutive samples that share a stack prefix become one span per
 * shared frame: a "B" event where a frame starts and an "E" event where it
 * ends. A sample stands for the period of CPU time before it was taken;
 * a gap of more than half a period between samples (the thread was off
 * the CPU) ends every open frame.
 *
 * Timestamps are microseconds since the start of the recording, and never
 * go back on a track.
 */
#ifndef RECCE_WRITER_CHROME_H
#define RECCE_WRITER_CHROME_H

#include <stdio.h>

#include "profile/stacks.h"

/* events: the set's timeline (stacks_timeline()). Returns 0, -ENOMEM, or
 * -EIO when writing to out failed. */
int chrome_write(FILE *out, const struct stack_set *set, const struct stack_event *events,
		 size_t nevents);

#endif
