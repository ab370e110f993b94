/*
 * ratchet: recce's demo target, a small HTTP/1.1 server on loopback with
 * one deliberately slow endpoint. `make demo` runs it, drives requests at it
 * with build/drive, records it with `recce record -p` and shows where its
 * CPU goes: in old_fibonacci, a naive recursive Fibonacci.
 *
 *   ratchet [PORT [WORKERS]]     PORT 8080 by default (0: any free port),
 *                                WORKERS 2 by default
 *
 *   GET /fibonacci?n=N      fibonacci(N) the slow way (N capped at 45)
 *   GET /number-info?n=N    primality, digit sum, Collatz steps, divisors
 *                           (N at most 10^12)
 *   GET /health             "ok"
 *
 * It prints "ratchet: listening on 127.0.0.1:PORT" once it accepts
 * connections and exits cleanly on SIGTERM or SIGINT. Every response is
 * "Connection: close" with a Content-Length. Requests are read into a
 * bounded buffer with a timeout, so a bad or slow client gets an error, not
 * a crash or a stuck worker.
 *
 * The work functions are extern and noinline so that they keep frames of
 * their own in a profile, under their own names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST   8192 /* request line and headers */
#define MAX_WORKERS   64
#define MAX_FIBONACCI 45	       /* about ten seconds of CPU; more would look hung */
#define MAX_NUMBER    1000000000000ULL /* a million trial divisions at most */
#define READ_TIMEOUT  5		       /* seconds a client may take to send its request */

#define WORK __attribute__((noinline, noclone)) /* keep a frame and a name */

static int listen_fd = -1;
static atomic_int stopping;
static atomic_ulong requests_served;

WORK unsigned long long old_fibonacci(unsigned n)
{
	if (n < 2)
		return n;
	return old_fibonacci(n - 1) + old_fibonacci(n - 2);
}

WORK int is_prime(uint64_t n)
{
	if (n < 2)
		return 0;
	if (n % 2 == 0)
		return n == 2;
	for (uint64_t d = 3; d <= n / d; d += 2)
		if (n % d == 0)
			return 0;
	return 1;
}

WORK unsigned digit_sum(uint64_t n)
{
	unsigned sum = 0;

	for (; n > 0; n /= 10)
		sum += (unsigned)(n % 10);
	return sum;
}

/* Steps to reach 1; stops at 100000 steps or before 3n + 1 overflows. */
WORK unsigned collatz_steps(uint64_t n)
{
	unsigned steps = 0;

	while (n > 1 && steps < 100000) {
		if (n % 2 == 0)
			n /= 2;
		else if (n <= (UINT64_MAX - 1) / 3)
			n = 3 * n + 1;
		else
			break;
		steps++;
	}
	return steps;
}

WORK uint64_t count_divisors(uint64_t n)
{
	uint64_t count = 0, d;

	for (d = 1; d <= n / d; d++) {
		if (n % d == 0)
			count += (d == n / d) ? 1 : 2;
	}
	return count;
}

/* Writes all of buf; the client may have gone, which is not our problem. */
static void send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void respond(int fd, int status, const char *reason, const char *body)
{
	char head[256];
	size_t len = strlen(body);
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\n"
			 "Content-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: close\r\n"
			 "\r\n",
			 status, reason, len);

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

/*
 * Finds parameter name in query (the part after '?', NUL-terminated) and
 * parses it as a decimal number without sign. Returns 0, or -1 when it is
 * missing, empty, not a number or out of range.
 */
static int query_number(const char *query, const char *name, uint64_t *out)
{
	size_t name_len = strlen(name);

	for (const char *p = query; p && *p;) {
		const char *next = strchr(p, '&');

		if (strncmp(p, name, name_len) == 0 && p[name_len] == '=') {
			const char *digits = p + name_len + 1;
			uint64_t v = 0;
			size_t i;

			for (i = 0; digits[i] >= '0' && digits[i] <= '9'; i++) {
				unsigned d = (unsigned)(digits[i] - '0');

				if (v > (UINT64_MAX - d) / 10)
					return -1;
				v = v * 10 + d;
			}
			if (i == 0 || (digits[i] != '\0' && digits[i] != '&'))
				return -1;
			*out = v;
			return 0;
		}
		p = next ? next + 1 : NULL;
	}
	return -1;
}

static void route(int fd, const char *path, const char *query)
{
	char body[512];
	uint64_t n;

	if (strcmp(path, "/health") == 0) {
		respond(fd, 200, "OK", "ok\n");
	} else if (strcmp(path, "/fibonacci") == 0) {
		if (query_number(query, "n", &n) < 0) {
			respond(fd, 400, "Bad Request", "usage: /fibonacci?n=NUMBER\n");
			return;
		}
		if (n > MAX_FIBONACCI)
			n = MAX_FIBONACCI;
		snprintf(body, sizeof(body), "fibonacci(%" PRIu64 ") = %llu\n", n,
			 old_fibonacci((unsigned)n));
		respond(fd, 200, "OK", body);
	} else if (strcmp(path, "/number-info") == 0) {
		if (query_number(query, "n", &n) < 0 || n > MAX_NUMBER) {
			respond(fd, 400, "Bad Request",
				"usage: /number-info?n=NUMBER (at most 1000000000000)\n");
			return;
		}
		snprintf(body, sizeof(body),
			 "n: %" PRIu64 "\nprime: %s\ndigit sum: %u\ncollatz steps: %u\n"
			 "divisors: %" PRIu64 "\n",
			 n, is_prime(n) ? "yes" : "no", digit_sum(n), collatz_steps(n),
			 count_divisors(n));
		respond(fd, 200, "OK", body);
	} else {
		respond(fd, 404, "Not Found", "not found\n");
	}
}

/* Reads the request head into buf (NUL-terminated). Returns its length,
 * or -1 when the client sent too much, too little or too slowly. */
static ssize_t read_request(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size - 1) {
		ssize_t n = recv(fd, buf + len, size - 1 - len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return (ssize_t)len;
	}
	return -1;
}

static void handle(int fd)
{
	char buf[MAX_REQUEST];
	char *method, *target, *version, *query, *save = NULL;
	struct timeval timeout = {READ_TIMEOUT, 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	if (read_request(fd, buf, sizeof(buf)) < 0) {
		respond(fd, 400, "Bad Request", "bad request\n");
		return;
	}
	buf[strcspn(buf, "\r\n")] = '\0'; /* the request line only */
	method = strtok_r(buf, " ", &save);
	target = strtok_r(NULL, " ", &save);
	version = strtok_r(NULL, " ", &save);
	if (!method || !target || !version || strtok_r(NULL, " ", &save) ||
	    strncmp(version, "HTTP/1.", 7) != 0 || target[0] != '/') {
		respond(fd, 400, "Bad Request", "bad request\n");
		return;
	}
	if (strcmp(method, "GET") != 0) {
		respond(fd, 405, "Method Not Allowed", "only GET\n");
		return;
	}
	query = strchr(target, '?');
	if (query)
		*query++ = '\0';
	route(fd, target, query ? query : "");
	atomic_fetch_add(&requests_served, 1);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stopping)) {
		int fd = accept(listen_fd, NULL, NULL);

		if (fd < 0) {
			if (atomic_load(&stopping))
				break;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* out of descriptors: let other connections finish */
				struct timespec pause = {0, 10 * 1000 * 1000};

				nanosleep(&pause, NULL);
			}
			continue;
		}
		handle(fd);
		close(fd);
	}
	return NULL;
}

static int parse_arg(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long port = 8080, nworkers = 2;
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t addr_len = sizeof(addr);
	pthread_t workers[MAX_WORKERS];
	sigset_t signals;
	int one = 1, sig;

	if (argc > 3 || (argc > 1 && parse_arg(argv[1], 0, 65535, &port) < 0) ||
	    (argc > 2 && parse_arg(argv[2], 1, MAX_WORKERS, &nworkers) < 0)) {
		fprintf(stderr, "usage: ratchet [PORT (0-65535, 0: any) [WORKERS (1-%d)]]\n",
			MAX_WORKERS);
		return 2;
	}

	/* Signals go to the main thread only, which waits for them below;
	 * the workers inherit the mask. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0) {
		perror("ratchet: socket");
		return 1;
	}
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)port);
	if (bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listen_fd, 128) < 0 ||
	    getsockname(listen_fd, (struct sockaddr *)&addr, &addr_len) < 0) {
		fprintf(stderr, "ratchet: cannot listen on 127.0.0.1:%ld: %s\n", port,
			strerror(errno));
		return 1;
	}

	for (long i = 0; i < nworkers; i++) {
		int err = pthread_create(&workers[i], NULL, worker, NULL);

		if (err) {
			fprintf(stderr, "ratchet: cannot start a worker: %s\n", strerror(err));
			return 1;
		}
	}
	printf("ratchet: listening on 127.0.0.1:%u\n", ntohs(addr.sin_port));
	fflush(stdout);

	while (sigwait(&signals, &sig) != 0)
		;
	/* Shutting the listening socket down wakes the workers in accept();
	 * a worker busy with a request finishes it first. */
	atomic_store(&stopping, 1);
	shutdown(listen_fd, SHUT_RDWR);
	for (long i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
	close(listen_fd);
	printf("ratchet: stopped by %s after %lu requests\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
	       atomic_load(&requests_served));
	return 0;
}
