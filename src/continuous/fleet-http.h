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

struct profile;

struct fleet_http {
	struct clickhouse *ch;
	const char *title; /* the page's, "HOST:PORT/DB" */
	/* The page asks for a range's flamegraph and top table at once, over
	 * the same query, and ClickHouse's merge of a fleet's range is its
	 * longest wait: the profile the first of the pair read is kept for
	 * the other (once, within a few seconds). */
	struct profile *kept;
	char *kept_query;
	char kept_what[8]; /* "flame" or "top": which asked for it */
	uint64_t kept_ns;  /* CLOCK_MONOTONIC, when it was read */
	int kept_empty;	   /* the range had no samples */
};

/* An http_handler_fn (util/http-serve.h) over a struct fleet_http. */
int fleet_http(void *ctx, const char *path, const char *query, FILE *fp, const char **type);

/* Frees what h keeps between requests. */
void fleet_http_release(struct fleet_http *h);

#endif
