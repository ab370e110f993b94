/*
 * The LTTng-UST tracepoint the events benchmark compares librecce with:
 * one event with one integer, as recce_event_value writes.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER recce_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./events-tp.h"

#if !defined(EVENTS_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define EVENTS_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(recce_bench, tick, LTTNG_UST_TP_ARGS(long, i),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(long, i, i)))

#endif

#include <lttng/tracepoint-event.h>
