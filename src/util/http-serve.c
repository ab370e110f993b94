/*
 * A one-path HTTP/1.1 responder (http-serve.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/http-serve.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/readall.h"

static void reply(int fd, const char *status, const char *type, const char *body, size_t n)
{
	char head[512];
	/* The page may show a token in its address and profiles of the
	 * machine: no cache keeps it, no link sends its address on, no other
	 * site frames it. */
	int k = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
			 "Content-Security-Policy: frame-ancestors 'none'\r\n"
			 "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
			 status, type, n);
	if (write_all(fd, head, (size_t)k) == 0 && n)
		write_all(fd, body, n);
}

/* Reads the request on fd (8 KiB, within REQUEST_MS in all, however
 * slowly its bytes come) into req: NULL and the target of a GET in
 * target, or the status line to answer with. */
#define TARGET_MAX 2048
#define REQ_MAX	   8192
#define REQUEST_MS 2000

static const char *read_request(int fd, char req[REQ_MAX], char target[TARGET_MAX])
{
	size_t got = 0;
	int64_t deadline = (int64_t)time_now_ns(CLOCK_MONOTONIC) + REQUEST_MS * 1000000LL;

	/* The request line and headers, until the blank line. */
	while (got < REQ_MAX - 1) {
		int r = evloop_wait_fd(fd, POLLIN, deadline);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t n = read(fd, req + got, REQ_MAX - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	char method[8] = "";
	if (sscanf(req, "%7s %2047s", method, target) != 2)
		return "400 Bad Request";
	if (strcmp(method, "GET") != 0)
		return "405 Method Not Allowed";
	return NULL;
}

/* Compares in a time that does not depend on where a and b differ. */
static int same_secret(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Whether the request carries token: "token=TOKEN" in its query, or an
 * "Authorization: Bearer TOKEN" header (as Prometheus sends). */
static int has_token(const char *req, const char *query, const char *token)
{
	char given[256];
	size_t n = strlen(token);

	if (http_query_param(query, "token", given, sizeof(given)) && strlen(given) == n &&
	    same_secret(given, token, n))
		return 1;
	for (const char *h = strchr(req, '\n'); h; h = strchr(h + 1, '\n')) {
		if (strncasecmp(h + 1, "Authorization: Bearer ", 22) != 0)
			continue;
		const char *v = h + 23;
		size_t len = strcspn(v, "\r\n");
		return len == n && same_secret(v, token, n);
	}
	return 0;
}

int http_serve_conn(int fd, const char *token, http_handler_fn handler, void *ctx)
{
	char req[REQ_MAX], target[TARGET_MAX];

	const char *bad = read_request(fd, req, target);
	if (bad) {
		reply(fd, bad, "text/plain", "", 0);
		close(fd);
		return 0;
	}
	char *query = strchr(target, '?');
	if (query)
		*query++ = '\0';
	if (token && !has_token(req, query ? query : "", token)) {
		static const char why[] = "this page wants its token: open the address the agent "
					  "printed (?token=...), or send 'Authorization: Bearer "
					  "TOKEN'\n";
		reply(fd, "401 Unauthorized", "text/plain", why, sizeof(why) - 1);
		close(fd);
		return 0;
	}
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	if (!fp) {
		reply(fd, "500 Internal Server Error", "text/plain", "", 0);
		close(fd);
		return 0;
	}
	const char *type = "text/plain; charset=utf-8";
	int status = handler(ctx, target, query ? query : "", fp, &type);
	fclose(fp);
	if (status == 200)
		reply(fd, "200 OK", type, buf, n);
	else if (status == 400)
		reply(fd, "400 Bad Request", type, buf, n);
	else if (status == 404)
		reply(fd, "404 Not Found", "text/plain", "not found\n", 10);
	else
		reply(fd, "500 Internal Server Error", type, buf, n);
	free(buf);
	close(fd);
	return 0;
}

int http_serve(int lfd, http_handler_fn handler, void *ctx)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	return http_serve_conn(fd, NULL, handler, ctx);
}

/* The one path of http_answer(). */
struct one_path {
	const char *path, *type;
	void (*body)(FILE *fp, void *ctx);
	void *ctx;
};

static int one_path(void *arg, const char *path, const char *query, FILE *fp, const char **type)
{
	struct one_path *o = arg;

	(void)query;
	if (strcmp(path, o->path) != 0)
		return 404;
	o->body(fp, o->ctx);
	*type = o->type;
	return 200;
}

int http_answer(int lfd, const char *path, const char *content_type,
		void (*body)(FILE *fp, void *ctx), void *ctx)
{
	struct one_path o = {path, content_type, body, ctx};
	return http_serve(lfd, one_path, &o);
}

int http_query_param(const char *query, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);

	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, key, klen) != 0 || p[klen] != '=')
			continue;
		const char *v = p + klen + 1;
		size_t o = 0;
		for (; *v && *v != '&' && o + 1 < len; v++) {
			if (*v == '%' && v[1] && v[2]) {
				char hex[3] = {v[1], v[2], 0};
				out[o++] = (char)strtol(hex, NULL, 16);
				v += 2;
			} else {
				out[o++] = *v == '+' ? ' ' : *v;
			}
		}
		out[o] = '\0';
		return 1;
	}
	return 0;
}
