/*
 * Times and spans as people write them, for the continuous agent's
 * options and `recce query`: a span is a number and a unit ("500ms",
 * "10s", "30m", "1h", "7d"; a bare number is seconds), a time is
 * "now", a span before now ("-1h"), "@EPOCH" (seconds since 1970), a
 * local date and time ("2026-11-24 14:00[:SS]"), or a local time of day
 * ("14:05[:SS]") on the day of a reference time.
 */
#ifndef RECCE_UTIL_WHEN_H
#define RECCE_UTIL_WHEN_H

#include <stdint.h>

/* The span s in nanoseconds: 0, or -1 when s is not one. */
int when_span(const char *s, int64_t *ns);

/* The time s in nanoseconds since the epoch, now and day_of being
 * CLOCK_REALTIME nanoseconds (a time of day falls on day_of's local day):
 * 0, or -1 when s is not one. */
int when_time(const char *s, int64_t now, int64_t day_of, int64_t *ns);

#endif
