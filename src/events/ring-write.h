/*
 * Saves events read from a librecce file as a file of the same layout
 * (ring-format.h), so that one reader reads a live process, a crashed
 * one and a saved run alike. The saved file holds every event given, on
 * the CLOCK_MONOTONIC nanosecond clock with the source's wall-clock pair,
 * one slot a thread, and each thread's count of events lost before it
 * was saved.
 */
#ifndef RECCE_EVENTS_RING_WRITE_H
#define RECCE_EVENTS_RING_WRITE_H

#include <stddef.h>
#include <stdio.h>

#include "events/ring-read.h"

/* Writes the file to fp. Returns 0, -ENOMEM, or -EIO. */
int ring_save(FILE *fp, const struct ring_reader *r, const struct ring_event *events, size_t n);

#endif
