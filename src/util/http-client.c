/*
 * One POST and its answer (http-client.h): the request written whole, the
 * answer read to the end of the connection, its head parsed, and a
 * chunked body joined.
 */
#include "util/http-client.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/readall.h"
#include "util/tcp.h"

void http_reply_release(struct http_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

void http_url_encode(FILE *fp, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (isalnum(*c) || strchr("-._~", *c))
			fputc(*c, fp);
		else
			fprintf(fp, "%%%02X", *c);
	}
}

/* Reads fd to its end (each read bounded by the socket's timeout),
 * keeping what came before an error. */
static int read_to_end(int fd, size_t max, char **out, size_t *len)
{
	int err = read_all_kept(fd, max, out, len);

	if (err == -EAGAIN || err == -EWOULDBLOCK)
		err = -ETIMEDOUT;
	return err;
}

/* The value of header name in head (up to its blank line), or NULL. */
static const char *header(const char *head, const char *end, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = strchr(head, '\n'); l && l < end; l = strchr(l + 1, '\n')) {
		const char *h = l + 1;
		if ((size_t)(end - h) > n && strncasecmp(h, name, n) == 0 && h[n] == ':') {
			h += n + 1;
			while (*h == ' ' || *h == '\t')
				h++;
			return h;
		}
	}
	return NULL;
}

/* Joins the chunks of body[0..len) in place; returns the joined length,
 * or -1 when they are malformed. */
static long dechunk(char *body, size_t len)
{
	size_t in = 0, out = 0;

	for (;;) {
		char *end;
		if (in >= len)
			return -1;
		unsigned long size = strtoul(body + in, &end, 16);
		char *nl = memchr(body + in, '\n', len - in);
		if (end == body + in || !nl)
			return -1;
		in = (size_t)(nl - body) + 1;
		if (size == 0)
			return (long)out;
		if (size > len - in)
			return -1;
		memmove(body + out, body + in, size);
		out += size;
		in += size;
		/* The chunk's CRLF. */
		if (in < len && body[in] == '\r')
			in++;
		if (in < len && body[in] == '\n')
			in++;
	}
}

static int parse_reply(char *raw, size_t n, struct http_reply *out)
{
	char *sep = strstr(raw, "\r\n\r\n");
	size_t skip = 4;

	if (!sep) {
		sep = strstr(raw, "\n\n");
		skip = 2;
	}
	int major, minor;
	if (!sep || sscanf(raw, "HTTP/%d.%d %d", &major, &minor, &out->status) != 3)
		return -EPROTO;
	char *body = sep + skip;
	size_t blen = n - (size_t)(body - raw);
	const char *te = header(raw, sep, "Transfer-Encoding");
	if (te && strncasecmp(te, "chunked", 7) == 0) {
		long joined = dechunk(body, blen);
		if (joined < 0)
			return -EPROTO;
		blen = (size_t)joined;
	}
	memmove(raw, body, blen);
	raw[blen] = '\0';
	out->body = raw;
	out->len = blen;
	return 0;
}

/* The outcome of a request whose write or read ended with rc, having
 * read raw[0..n): 0 with *out filled for a whole answer, and for a
 * refusal read before the connection broke (an answer of success whose
 * connection broke is not whole enough to trust); else an error. */
static int take_reply(int rc, char *raw, size_t n, struct http_reply *out)
{
	int broke = rc == -ECONNRESET || rc == -EPIPE;

	if (rc && !broke)
		return rc;
	if (!raw || !n || parse_reply(raw, n, out) < 0)
		return rc ? rc : -EPROTO;
	if (rc && out->status == 200) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	return 0;
}

int http_post(const char *host, const char *port, const char *target, const void *body, size_t len,
	      int timeout_ms, size_t max_reply, struct http_reply *out, char *err, size_t errlen)
{
	char head[1024];
	char *raw = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	int fd = tcp_connect_within(host, port, timeout_ms, err, errlen);
	if (fd < 0)
		return -errno;
	/* HTTP/1.1 with "Connection: close": the answer ends with the
	 * connection, chunked or not. */
	int k = snprintf(head, sizeof(head),
			 "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Length: %zu\r\n"
			 "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n",
			 target, host, port, len);
	int rc = (size_t)k < sizeof(head) ? 0 : -ENAMETOOLONG;
	if (!rc)
		rc = send_all(fd, head, (size_t)k);
	if (!rc && len)
		rc = send_all(fd, body, len);
	if (rc == -EAGAIN || rc == -EWOULDBLOCK)
		rc = -ETIMEDOUT;
	/* A server may refuse before it has read the whole request and
	 * close, which resets the connection under the rest of it: its
	 * answer is read all the same. */
	if (!rc || rc == -EPIPE || rc == -ECONNRESET) {
		int rrc = read_to_end(fd, max_reply, &raw, &n);
		rc = take_reply(rc ? rc : rrc, raw, n, out);
		if (out->body)
			raw = NULL;
	}
	close(fd);
	if (rc == -EPROTO)
		snprintf(err, errlen, "%s port %s answered something other than HTTP", host, port);
	else if (rc)
		snprintf(err, errlen, "%s port %s: %s", host, port,
			 rc == -EFBIG ? "the answer is too large" : strerror(-rc));
	free(raw);
	return rc;
}
