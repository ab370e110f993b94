/*
 * drive: the load driver of recce's demo. It sends requests to ratchet on
 * 127.0.0.1 for a number of seconds from a few threads, one connection per
 * request, mostly /fibonacci?n=27..30 with some /number-info, and reports
 * how many were answered. `make demo` runs it while recce records ratchet.
 *
 *   drive PORT [SECONDS [THREADS]]     6 seconds and 3 threads by default
 *
 * Exits 0 when at least one request got a 200 answer, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define TIMEOUT	    30 /* seconds to wait for one answer */

struct driver {
	pthread_t thread;
	unsigned seed;
	unsigned long done, failed;
};

static unsigned short port;
static struct timespec deadline;

static int before_deadline(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec < deadline.tv_nsec);
}

/* Sends one GET for path and reads the answer to its end. Returns the
 * HTTP status, or -1 when the connection or the answer failed. */
static int get(const char *path)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval timeout = {TIMEOUT, 0};
	char request[256], answer[4096], sink[4096];
	size_t len = 0;
	int fd, n, status = -1;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		goto out;
	n = snprintf(request, sizeof(request),
		     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
	if (send(fd, request, (size_t)n, MSG_NOSIGNAL) != n)
		goto out;
	/* Keep the start of the answer for its status line; drain the rest. */
	for (;;) {
		int full = len == sizeof(answer) - 1;
		ssize_t got = full ? recv(fd, sink, sizeof(sink), 0)
				   : recv(fd, answer + len, sizeof(answer) - 1 - len, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto out;
		if (got == 0)
			break;
		if (!full)
			len += (size_t)got;
	}
	answer[len] = '\0';
	if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
out:
	close(fd);
	return status;
}

static void *drive(void *arg)
{
	struct driver *d = arg;
	char path[64];

	while (before_deadline()) {
		/* Four in five requests are the slow endpoint. */
		if (rand_r(&d->seed) % 5 != 0)
			snprintf(path, sizeof(path), "/fibonacci?n=%d", 27 + rand_r(&d->seed) % 4);
		else
			snprintf(path, sizeof(path), "/number-info?n=%d",
				 100000000 + rand_r(&d->seed) % 900000000);
		if (get(path) == 200) {
			d->done++;
		} else {
			/* The server may not be up yet, or be gone: do not spin. */
			struct timespec pause = {0, 20 * 1000 * 1000};

			d->failed++;
			nanosleep(&pause, NULL);
		}
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
	struct driver drivers[MAX_THREADS];
	long port_arg, seconds = 6, nthreads = 3;
	unsigned long done = 0, failed = 0;

	if (argc < 2 || argc > 4 || parse_arg(argv[1], 1, 65535, &port_arg) < 0 ||
	    (argc > 2 && parse_arg(argv[2], 1, 3600, &seconds) < 0) ||
	    (argc > 3 && parse_arg(argv[3], 1, MAX_THREADS, &nthreads) < 0)) {
		fprintf(stderr, "usage: drive PORT [SECONDS (1-3600) [THREADS (1-%d)]]\n",
			MAX_THREADS);
		return 2;
	}
	port = (unsigned short)port_arg;
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += seconds;

	for (long i = 0; i < nthreads; i++) {
		drivers[i] = (struct driver){.seed = (unsigned)(i * 7919 + 1)};
		int err = pthread_create(&drivers[i].thread, NULL, drive, &drivers[i]);

		if (err) {
			fprintf(stderr, "drive: cannot start a thread: %s\n", strerror(err));
			return 1;
		}
	}
	for (long i = 0; i < nthreads; i++) {
		pthread_join(drivers[i].thread, NULL);
		done += drivers[i].done;
		failed += drivers[i].failed;
	}
	printf("drive: %lu requests answered in %ld s from %ld threads (%lu failed)\n", done,
	       seconds, nthreads, failed);
	return done > 0 ? 0 : 1;
}
