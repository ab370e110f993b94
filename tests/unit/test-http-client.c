/*
 * Unit tests of the HTTP client (util/http-client.h) against a server
 * made here, a child answering one connection with bytes chosen by the
 * test: a plain body, a chunked one joined, an error status passed on,
 * something that is not HTTP refused, a server that says nothing timed
 * out, a closed port refused, a refusal sent before the request was read
 * passed on though the connection was reset under it (and a success sent
 * so not trusted); and percent-encoding of a query.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/http-client.h"
#include "util/readall.h"
#include "util/tcp.h"

/* A child that accepts one connection, reads the request's head and
 * body (Content-Length; with head_only, its head alone), writes answer
 * (NULL: nothing, for 2 s) and closes. Returns the child's pid; port
 * receives the port. */
static pid_t serve(const char *answer, int head_only, char *port, size_t len)
{
	char bound[64];
	int lfd = tcp_listen("127.0.0.1:0", bound, sizeof(bound));

	assert_true(lfd >= 0);
	snprintf(port, len, "%s", strchr(bound, ':') + 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = accept(lfd, NULL, NULL);
		char req[4096];
		size_t got = 0;
		ssize_t n;
		while (got < sizeof(req) - 1 &&
		       (n = read(fd, req + got, sizeof(req) - 1 - got)) > 0) {
			got += (size_t)n;
			req[got] = '\0';
			char *end = strstr(req, "\r\n\r\n");
			const char *cl = strstr(req, "Content-Length: ");
			if (end && (head_only || (cl && got >= (size_t)(end + 4 - req) +
								   strtoul(cl + 16, NULL, 10))))
				break;
		}
		if (answer)
			write_all(fd, answer, strlen(answer));
		else
			sleep(2);
		close(fd);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static pid_t serve_once(const char *answer, char *port, size_t len)
{
	return serve(answer, 0, port, len);
}

static void reap(pid_t pid)
{
	int st;
	waitpid(pid, &st, 0);
}

static void test_plain(void **state)
{
	char port[16], err[256];
	struct http_reply r;

	(void)state;
	pid_t pid =
	    serve_once("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n", port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/?q=1", "body", 4, 2000, 1 << 20, &r, err, sizeof(err)),
	    0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "hello\n");
	assert_int_equal(r.len, 6);
	http_reply_release(&r);
	reap(pid);
}

static void test_chunked(void **state)
{
	char port[16], err[256];
	struct http_reply r;

	(void)state;
	pid_t pid = serve_once("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n",
			       port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/", "x", 1, 2000, 1 << 20, &r, err, sizeof(err)), 0);
	assert_string_equal(r.body, "hello, world");
	http_reply_release(&r);
	reap(pid);
}

static void test_error_status(void **state)
{
	char port[16], err[256];
	struct http_reply r;

	(void)state;
	pid_t pid = serve_once("HTTP/1.1 500 Internal Server Error\r\n\r\nCode: 60, no table\n",
			       port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/", "", 0, 2000, 1 << 20, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, 500);
	assert_string_equal(r.body, "Code: 60, no table\n");
	http_reply_release(&r);
	reap(pid);
}

static void test_refusals(void **state)
{
	char port[16], err[256];
	struct http_reply r;

	(void)state;
	pid_t pid = serve_once("SSH-2.0-OpenSSH_9.2\r\n", port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/", "", 0, 2000, 1 << 20, &r, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "answered something other than HTTP"));
	reap(pid);

	pid = serve_once("HTTP/1.1 200 OK\r\n\r\n0123456789", port, sizeof(port));
	assert_int_equal(http_post("127.0.0.1", port, "/", "", 0, 2000, 16, &r, err, sizeof(err)),
			 -EFBIG);
	reap(pid);

	pid = serve_once(NULL, port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/", "", 0, 300, 1 << 20, &r, err, sizeof(err)),
	    -ETIMEDOUT);
	reap(pid);

	/* The port of a listener just closed: nothing is there. */
	char bound[64];
	int lfd = tcp_listen("127.0.0.1:0", bound, sizeof(bound));
	assert_true(lfd >= 0);
	close(lfd);
	assert_int_equal(http_post("127.0.0.1", strchr(bound, ':') + 1, "/", "", 0, 2000, 1 << 20,
				   &r, err, sizeof(err)),
			 -ECONNREFUSED);
	assert_non_null(strstr(err, "Connection refused"));
}

/* A server that answers before it has read the request and closes with
 * the rest unread resets the connection (as ClickHouse does to a wrong
 * password): the refusal still reaches the caller, a success does not. */
static void test_answer_before_reset(void **state)
{
	char port[16], err[256];
	struct http_reply r;
	size_t big = 64 << 20;
	char *body = calloc(1, big);

	(void)state;
	assert_non_null(body);
	pid_t pid = serve("HTTP/1.1 516 Unknown\r\nContent-Length: 24\r\n\r\n"
			  "Code: 516, wrong passwd\n",
			  1, port, sizeof(port));
	assert_int_equal(
	    http_post("127.0.0.1", port, "/", body, big, 5000, 1 << 20, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, 516);
	assert_string_equal(r.body, "Code: 516, wrong passwd\n");
	http_reply_release(&r);
	reap(pid);

	pid = serve("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", 1, port, sizeof(port));
	int rc = http_post("127.0.0.1", port, "/", body, big, 5000, 1 << 20, &r, err, sizeof(err));
	assert_true(rc == -ECONNRESET || rc == -EPIPE);
	assert_null(r.body);
	reap(pid);
	free(body);
}

static void test_url_encode(void **state)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	(void)state;
	http_url_encode(fp, "INSERT INTO db.t FORMAT TabSeparated&x=1/é");
	fclose(fp);
	assert_string_equal(buf, "INSERT%20INTO%20db.t%20FORMAT%20TabSeparated%26x%3D1%2F%C3%A9");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain),
	    cmocka_unit_test(test_chunked),
	    cmocka_unit_test(test_error_status),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_answer_before_reset),
	    cmocka_unit_test(test_url_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
