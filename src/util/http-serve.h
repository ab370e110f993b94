/*
 * The smallest HTTP/1.1 server that Prometheus can scrape: one listening
 * socket (util/tcp.h's tcp_listen()), one request answered at a time (GET of one path, the body
 * made by a callback), the connection closed after each answer. It reads at most 8 KiB of a request
 * and waits at most a second for it, so a client that stalls cannot hold up the caller's loop for
 * long.
 */
#ifndef RECCE_UTIL_HTTP_SERVE_H
#define RECCE_UTIL_HTTP_SERVE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Accepts one connection on lfd and answers it: 200 with the body that
 * body(fp, ctx) writes for GET path, 404 for other paths, 405 for other
 * methods. Returns 0, or -errno when accepting failed.
 */
int http_answer(int lfd, const char *path, const char *content_type,
		void (*body)(FILE *fp, void *ctx), void *ctx);

#endif
