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

/* What a page request asks for, as a filter of the store: the range of
 * its from and to (ns since the epoch; the last hour by default) and its
 * comm, when it names one (f.comms points into the struct). */
struct page_ask {
	struct store_filter f;
	char comm[256];
	const char *comms[1];
};

void continuous_http_ask(const char *query, struct page_ask *a);

#endif
