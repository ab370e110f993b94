/*
 * A one-path HTTP/1.1 responder (http-serve.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/http-serve.h"
#include "util/readall.h"

static void reply(int fd, const char *status, const char *type, const char *body, size_t n)
{
	char head[256];
	int k = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, n);
	if (write_all(fd, head, (size_t)k) == 0 && n)
		write_all(fd, body, n);
}

int http_answer(int lfd, const char *path, const char *content_type,
		void (*body)(FILE *fp, void *ctx), void *ctx)
{
	char req[8192];
	size_t got = 0;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	/* The request line and headers, until the blank line. */
	while (got < sizeof(req) - 1) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 1000) != 1)
			break;
		ssize_t n = read(fd, req + got, sizeof(req) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	char method[8] = "", target[256] = "";
	if (sscanf(req, "%7s %255s", method, target) != 2) {
		reply(fd, "400 Bad Request", "text/plain", "", 0);
	} else if (strcmp(method, "GET") != 0) {
		reply(fd, "405 Method Not Allowed", "text/plain", "", 0);
	} else if (strncmp(target, path, strlen(path)) != 0 ||
		   (target[strlen(path)] != '\0' && target[strlen(path)] != '?')) {
		reply(fd, "404 Not Found", "text/plain", "not found\n", 10);
	} else {
		char *buf = NULL;
		size_t n = 0;
		FILE *fp = open_memstream(&buf, &n);
		if (fp) {
			body(fp, ctx);
			fclose(fp);
			reply(fd, "200 OK", content_type, buf, n);
		} else
			reply(fd, "500 Internal Server Error", "text/plain", "", 0);
		free(buf);
	}
	close(fd);
	return 0;
}
