/*
 * The profile page over the fleet store (`recce view --clickhouse`): the
 * agent's page and its requests (continuous-http.h), answered from
 * ClickHouse for every host or the one a request names (host=), and the
 * hosts the range has (/api/hosts), for the page's host picker.
 */
#ifndef RECCE_CONTINUOUS_FLEET_HTTP_H
#define RECCE_CONTINUOUS_FLEET_HTTP_H

#include <stdio.h>

#include "store/clickhouse.h"

struct fleet_http {
	struct clickhouse *ch;
	const char *title; /* the page's, "HOST:PORT/DB" */
};

/* An http_handler_fn (util/http-serve.h) over a struct fleet_http. */
int fleet_http(void *ctx, const char *path, const char *query, FILE *fp, const char **type);

#endif
