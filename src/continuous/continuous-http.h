/*
 * What the continuous agent serves over HTTP: its health for Prometheus
 * (/metrics), the profile page (/), and the page's requests: the CPU of
 * each command over time (/api/series) and a range's flamegraph and top
 * table (/api/flame, /api/top with from, to in nanoseconds since the
 * epoch and an optional comm), read from the store.
 */
#ifndef RECCE_CONTINUOUS_HTTP_H
#define RECCE_CONTINUOUS_HTTP_H

#include <stdint.h>
#include <stdio.h>

#include "continuous/continuous.h"
#include "store/store.h"

struct continuous_http {
	struct store *store;
	const char *host;
	struct continuous_stats *st; /* refreshed by stats_fn before /metrics */
	void (*stats_fn)(void *arg);
	void *stats_arg;
};

/* An http_handler_fn (util/http-serve.h) over a struct continuous_http. */
int continuous_http(void *ctx, const char *path, const char *query, FILE *fp, const char **type);

/* from and to (ns since the epoch) of a page request's query, the last
 * hour by default. */
void continuous_http_range(const char *query, int64_t *from, int64_t *to);

#endif
