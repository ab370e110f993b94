/*
 * recce query's options as parsed (query-options.c), for cmd-query.c.
 */
#ifndef RECCE_CLI_CMD_QUERY_H
#define RECCE_CLI_CMD_QUERY_H

#include <stddef.h>
#include <stdint.h>

struct query_args {
	const char *store, *clickhouse, *from, *to, *from2, *to2, *host, *output, *format;
	const char *clickhouse_password; /* --clickhouse-password FILE */
	int diff, windows, json;
	long long top;
	int64_t *pids;
	int npids;
	const char **comms, **keys, **values;
	size_t ncomms, ncomms_cap, nlabels, keys_cap, values_cap;
};

/* Parses argv into a (exits 2 with a message on a usage error). */
void query_parse_args(struct query_args *a, int argc, char **argv);

#endif
