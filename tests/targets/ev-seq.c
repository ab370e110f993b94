/*
 * librecce's sequence tokens inside one process, for tests/cli/seq.t: two
 * threads pass a token back and forth over pipes, as two processes would
 * over sockets, and the program prints what the API answered:
 *
 *   inject-none N      recce_seq_inject without a token (0)
 *   small N            inject into a buffer too small (0)
 *   garbage E          recce_seq_extract of a non-header (-EINVAL)
 *   bare E ID          extract of a bare W3C traceparent: its trace id
 *   header H           each header the threads send, in order
 *
 * then "ready" and sleeps until killed. The thread "ping" begins a token
 * "ping-pong", sends; "pong" receives and answers; three rounds.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "recce.h"

static int to_pong[2], to_ping[2];

static void send_token(int fd)
{
	char hdr[RECCE_SEQ_HEADER_MAX];
	size_t n = recce_seq_inject(hdr, sizeof(hdr));
	printf("header %s\n", hdr);
	if (write(fd, hdr, n + 1) != (ssize_t)(n + 1))
		perror("write");
}

static void receive_token(int fd)
{
	char hdr[RECCE_SEQ_HEADER_MAX];
	if (read(fd, hdr, sizeof(hdr)) > 0)
		recce_seq_extract(hdr);
}

static void *pong(void *arg)
{
	prctl(PR_SET_NAME, "pong");
	for (int i = 0; i < 3; i++) {
		receive_token(to_pong[0]);
		send_token(to_ping[1]);
	}
	return arg;
}

int main(void)
{
	char small[20];

	printf("inject-none %zu\n", recce_seq_inject(small, sizeof(small)));
	printf("garbage %d\n", recce_seq_extract("not a header"));
	int bare = recce_seq_extract("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
	printf("bare %d %d\n", bare, recce_seq_active());
	recce_seq_end();
	if (pipe(to_pong) || pipe(to_ping))
		return 1;
	prctl(PR_SET_NAME, "ping");
	recce_seq_begin("ping-pong");
	printf("small %zu\n", recce_seq_inject(small, sizeof(small)));
	pthread_t t;
	pthread_create(&t, NULL, pong, NULL);
	for (int i = 0; i < 3; i++) {
		send_token(to_pong[1]);
		receive_token(to_ping[0]);
	}
	pthread_join(t, NULL);
	recce_seq_end();
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
