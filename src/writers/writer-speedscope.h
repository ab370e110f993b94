/*
 * The speedscope writer: a stack_set as a speedscope JSON file
 * (https://www.speedscope.app/file-format-schema.json), one "sampled"
 * profile per thread (by the samples' pid and tid labels; one profile for
 * a profile without them), busiest thread first, and the functions
 * ((name, file) pairs) shared between them.
 *
 * With a timeline (events != NULL) each thread's samples are the events,
 * in time order, weighted by their period (or 1 for a count), so
 * speedscope's time-ordered view is true. Without one the order of samples
 * is unknown: each distinct stack is one sample weighted by its value, in
 * the order of its frames (merged stacks, as a flamegraph draws them), and
 * the profile's name says so.
 */
#ifndef RECCE_WRITER_SPEEDSCOPE_H
#define RECCE_WRITER_SPEEDSCOPE_H

#include <stdio.h>

#include "profile/stacks.h"

/* name is the file's name shown by speedscope (NULL: "recce"). Returns 0,
 * -ENOMEM, or -EIO when writing to out failed. */
int speedscope_write(FILE *out, const struct stack_set *set, const struct stack_event *events,
		     size_t nevents, const char *name);

#endif
