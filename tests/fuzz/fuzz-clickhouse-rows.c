/* Fuzz target: the fleet store's reader of ClickHouse's answers
 * (store/clickhouse-query.c): the input is the three answers of a query,
 * totals, stacks and samples, separated by NUL bytes, in TabSeparated
 * with arrays, as a server (or something posing as one) might send them;
 * what they make is a profile, written out again. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "store/clickhouse-sql.h"
#include "store/clickhouse.h"
#include "store/store.h"

struct answers {
	const uint8_t *data;
	size_t size, at;
};

/* The next answer: the bytes up to the next NUL, or none. */
static int next_answer(void *arg, const char *sql, struct http_reply *r)
{
	struct answers *a = arg;
	(void)sql;

	const uint8_t *start = a->data + a->at;
	size_t left = a->size - a->at;
	const uint8_t *nul = memchr(start, 0, left);
	size_t len = nul ? (size_t)(nul - start) : left;
	a->at += nul ? len + 1 : len;
	r->status = 200;
	r->body = malloc(len + 1);
	if (!r->body)
		return -ENOMEM;
	memcpy(r->body, start, len);
	r->body[len] = 0;
	r->len = len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct clickhouse *ch;
	const char *why;
	struct answers a = {data, size, 0};
	struct store_filter f = {.from_ns = 0, .to_ns = INT64_MAX};
	struct store_query_stats st;
	struct profile *p = NULL;

	if (clickhouse_open("clickhouse://127.0.0.1:9/fleet", &ch, &why) != 0)
		return 0;
	if (clickhouse_query_with(ch, next_answer, &a, &f, &p, &st) == 0 && p) {
		void *out = NULL;
		size_t len = 0;
		if (pprof_encode(p, 0, &out, &len) == 0)
			free(out);
		profile_free(p);
	}
	clickhouse_close(ch);
	return 0;
}
