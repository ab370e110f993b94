/*
 * Labels by time: each sample of a recording's timeline is given labels
 * that depend on its thread and its time (the librecce span it fell in,
 * the trace id of the request its thread served), so that one request's
 * samples can be told from another's in the same stacks.
 *
 * A profile sample stands for many samples of one stack and thread; those
 * given other labels are moved, with their values, into a sample of their
 * own (the same stack and labels, and the new ones), and the timeline is
 * written again to name it. A sample's value moved is 1 for a value in
 * "count" and its period (the timeline's) for any other unit: what the
 * recording counted for it. A sample left with nothing is removed.
 *
 * Ownership: p is changed in place; labels the callback gives are copied.
 */
#ifndef RECCE_TIME_LABELS_H
#define RECCE_TIME_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define TIME_LABELS_MAX 4

/*
 * Fills labels (room for TIME_LABELS_MAX) for the sample of thread tid
 * taken time_ns after the recording's start; returns how many (0: the
 * sample keeps the labels it has).
 */
typedef size_t (*time_labels_fn)(void *arg, int64_t tid, int64_t time_ns,
				 struct profile_label *labels);

/*
 * Labels p's timeline samples by fn. Returns 0, -ENODATA when p has no
 * timeline, -EBADMSG for a malformed one, -ENOMEM (p is then as it was,
 * or with some samples moved: whole either way).
 */
int profile_label_times(struct profile *p, time_labels_fn fn, void *arg);

#endif
