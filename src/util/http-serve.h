/*
 * The smallest HTTP/1.1 server that Prometheus and a page can use: one
 * listening socket (util/tcp.h's tcp_listen()), one request answered at a
 * time (a GET, the body made by a callback for one path or by a handler
 * that routes), the connection closed after each answer. It reads at most
 * 8 KiB of a request and waits at most 2 s for all of it, however slowly
 * its bytes come, so a client that trickles cannot hold up the caller's
 * loop for long (the agent's page goes further: a process per connection,
 * continuous/continuous.c).
 */
#ifndef RECCE_UTIL_HTTP_SERVE_H
#define RECCE_UTIL_HTTP_SERVE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Answers a GET: writes the body to fp for path (query: what followed the
 * '?', or ""), sets *type when it is not plain text, and returns the
 * status: 200, 400 (the body says why) or 404.
 */
typedef int (*http_handler_fn)(void *ctx, const char *path, const char *query, FILE *fp,
			       const char **type);

/* Accepts one connection on lfd and answers it with handler (405 for
 * methods other than GET). Returns 0, or -errno when accepting failed. */
int http_serve(int lfd, http_handler_fn handler, void *ctx);

/* Answers the one request of a connection already accepted (or the plain
 * end of a TLS relay), and closes fd. With token, a request must carry it,
 * as "token=TOKEN" in its query or an "Authorization: Bearer TOKEN"
 * header, else it gets 401 and the handler is not called. Returns 0. */
int http_serve_conn(int fd, const char *token, http_handler_fn handler, void *ctx);

/* The value of key in a query string ("from=1&to=2"), percent-decoded
 * into out (len bytes): 1, or 0 when the key is absent. */
int http_query_param(const char *query, const char *key, char *out, size_t len);

/*
 * Accepts one connection on lfd and answers it: 200 with the body that
 * body(fp, ctx) writes for GET path, 404 for other paths, 405 for other
 * methods. Returns 0, or -errno when accepting failed.
 */
int http_answer(int lfd, const char *path, const char *content_type,
		void (*body)(FILE *fp, void *ctx), void *ctx);

#endif
