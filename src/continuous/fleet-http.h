/*
 * The profile page over the fleet store (`recce view --clickhouse`): the
 * agent's page and its requests (continuous-http.h), answered from
 * ClickHouse for every host or the one a request names (host=), and in
 * every cgroup or the one it names (cgroup=, a systemd unit's or a
 * container's); the hosts the range has (/api/hosts) and the cgroups of
 * its samples (/api/cgroups), for the page's pickers.
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
