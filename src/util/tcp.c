/*
 * TCP addresses and sockets (see tcp.h).
 */
#include "util/tcp.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int copy(char *dst, size_t len, const char *src, size_t n)
{
	if (n >= len)
		return -EINVAL;
	memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}

int tcp_split(const char *spec, int bare_is_port, const char *def_host, const char *def_port,
	      char *host, size_t hlen, char *port, size_t plen)
{
	const char *h = spec, *hend, *p = NULL;
	const char *first = strchr(spec, ':'), *last = strrchr(spec, ':');

	if (spec[0] == '[') { /* [V6] or [V6]:PORT */
		const char *end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		h = spec + 1;
		hend = end;
		p = end[1] ? end + 2 : NULL;
	} else if (first && first == last) { /* HOST:PORT or :PORT */
		hend = first;
		p = first + 1;
	} else if (first || !bare_is_port) { /* a bare IPv6 address, or HOST */
		hend = spec + strlen(spec);
	} else { /* PORT */
		hend = spec;
		p = spec;
	}
	int err = hend > h ? copy(host, hlen, h, (size_t)(hend - h))
			   : copy(host, hlen, def_host, strlen(def_host));
	if (!err)
		err = p && *p ? copy(port, plen, p, strlen(p))
			      : copy(port, plen, def_port, strlen(def_port));
	return err;
}

/* A port number as a listener takes it: digits, at most 65535. */
static int port_ok(const char *port)
{
	char *end;
	long n = strtol(port, &end, 10);

	return *port && !*end && n >= 0 && n <= 65535;
}

int tcp_listen(const char *spec, char *bound, size_t len)
{
	char host[256], port[32];
	struct addrinfo hints = {0}, *res = NULL;

	if (tcp_split(spec, 1, "127.0.0.1", "", host, sizeof(host), port, sizeof(port)) < 0 ||
	    !port_ok(port))
		return -EINVAL;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
		return -EINVAL;
	int one = 1, fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int v6 = res->ai_family == AF_INET6, rc = 0;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 16) < 0)
		rc = -errno;
	freeaddrinfo(res);
	struct sockaddr_storage a;
	socklen_t alen = sizeof(a);
	char num[32];
	if (!rc && (getsockname(fd, (struct sockaddr *)&a, &alen) < 0 ||
		    getnameinfo((struct sockaddr *)&a, alen, NULL, 0, num, sizeof(num),
				NI_NUMERICSERV) != 0))
		rc = rc ? rc : -EINVAL;
	if (rc) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	snprintf(bound, len, v6 ? "[%s]:%s" : "%s:%s", host, num);
	return fd;
}

int tcp_connect(const char *host, const char *port, char *err, size_t errlen)
{
	return tcp_connect_within(host, port, 0, err, errlen);
}

int tcp_connect_within(const char *host, const char *port, int timeout_ms, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *res = NULL;
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	int fd = -1, saved = 0;

	hints.ai_socktype = SOCK_STREAM;
	int gai = getaddrinfo(host, port, &hints, &res);
	if (gai) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(gai));
		errno = ENOENT;
		return -1;
	}
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		/* On Linux the send timeout bounds connect() too; it then
		 * fails with EINPROGRESS. */
		if (timeout_ms > 0 &&
		    (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
		     setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)) {
			saved = errno;
			close(fd);
			fd = -1;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			saved = errno == EINPROGRESS ? ETIMEDOUT : errno;
			snprintf(err, errlen, "%s port %s: %s", host, port, strerror(saved));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		errno = saved ? saved : ECONNREFUSED;
	return fd;
}
