/*
 * The smallest HTTP/1.1 client that a database's HTTP interface needs
 * (the continuous agent's export to ClickHouse, and `recce query
 * --clickhouse`): one POST per connection, a body sent whole, the answer
 * read to its end (plain or chunked) under a cap, every step bounded by a
 * timeout so that a server that stalls costs the caller at most that.
 *
 * Ownership: http_post() fills a caller-allocated struct http_reply whose
 * body the caller frees with http_reply_release().
 */
#ifndef RECCE_UTIL_HTTP_CLIENT_H
#define RECCE_UTIL_HTTP_CLIENT_H

#include <stddef.h>
#include <stdio.h>

struct http_reply {
	int status; /* 200, 404, 500, ... */
	char *body; /* NUL-terminated, len bytes before the NUL */
	size_t len;
};

/*
 * POSTs body (len bytes) to http://host:port/target (target starts with
 * '/', already percent-encoded). Waits at most timeout_ms for each of
 * connecting, sending and every read; a reply past max_reply bytes is an
 * error. Returns 0 with *out filled (whatever the status), or -errno with
 * err saying what failed: -ECONNREFUSED and the other errors of connect,
 * -ETIMEDOUT, -EFBIG, -EPROTO for an answer that is not HTTP.
 */
int http_post(const char *host, const char *port, const char *target, const void *body, size_t len,
	      int timeout_ms, size_t max_reply, struct http_reply *out, char *err, size_t errlen);

void http_reply_release(struct http_reply *r);

/* Writes s percent-encoded for a URL's query to fp. */
void http_url_encode(FILE *fp, const char *s);

#endif
