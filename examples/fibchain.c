/*
 * The seed's three-node story, in C over TCP on loopback: an emperor asks
 * a second process for a Fibonacci number; that one asks a third, which
 * computes it; the answer comes back the same way. Every message carries
 * a librecce sequence token, so `recce seq` draws the request's path.
 *
 *   fibchain serve NAME PORT [NEXT_PORT]   answer "fib N" on PORT (0: any
 *                                          free one, printed): ask NEXT_PORT
 *                                          if given, else compute
 *   fibchain ask NAME PORT N [TIMES]       ask PORT for fib(N), TIMES times,
 *                                          print the answers, then wait
 *                                          until killed
 *
 * A message is one line: the token's header, a space, the text. NAME
 * becomes the process's name, which `recce seq` shows as the participant.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recce.h"

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Reads one line (without its newline) into buf; 0 at the end. */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t k = 0;
	char c;

	while (k + 1 < cap && read(fd, &c, 1) == 1) {
		if (c == '\n') {
			buf[k] = '\0';
			return 1;
		}
		buf[k++] = c;
	}
	return 0;
}

/* Sends text with the token's header in front. */
static void send_line(int fd, const char *text)
{
	char hdr[RECCE_SEQ_HEADER_MAX], line[512];

	if (!recce_seq_inject(hdr, sizeof(hdr)))
		memcpy(hdr, "-", 2);
	int n = snprintf(line, sizeof(line), "%s %s\n", hdr, text);
	if (write(fd, line, (size_t)n) != n)
		perror("fibchain: write");
}

/* Takes the token from a line and returns its text. */
static const char *take(char *line)
{
	char *space = strchr(line, ' ');
	if (!space)
		return line;
	*space = '\0';
	recce_seq_extract(line);
	return space + 1;
}

static int dial(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("fibchain: connect");
		exit(1);
	}
	return fd;
}

/* Asks port for text's answer, in the token's sequence. */
static void ask(int port, const char *text, char *answer, size_t cap)
{
	char line[512];
	int fd = dial(port);

	send_line(fd, text);
	if (!read_line(fd, line, sizeof(line)))
		line[0] = '\0';
	snprintf(answer, cap, "%s", take(line));
	close(fd);
}

static int serve(int port, int next)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 16) != 0) {
		perror("fibchain: listen");
		return 1;
	}
	socklen_t len = sizeof(a);
	getsockname(lfd, (struct sockaddr *)&a, &len); /* port 0: the kernel's pick */
	printf("listening on %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		char line[512], answer[128];
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		if (read_line(fd, line, sizeof(line))) {
			const char *text = take(line);
			recce_span_begin("handle");
			if (next)
				ask(next, text, answer, sizeof(answer));
			else
				snprintf(answer, sizeof(answer), "%ld", fib(atoi(text + 4)));
			recce_span_end("handle");
			send_line(fd, answer);
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "serve") && strcmp(argv[1], "ask")) ||
	    (!strcmp(argv[1], "ask") && argc < 5)) {
		fprintf(stderr, "usage: fibchain serve NAME PORT [NEXT_PORT]\n"
				"       fibchain ask NAME PORT N [TIMES]\n");
		return 2;
	}
	prctl(PR_SET_NAME, argv[2]);
	signal(SIGPIPE, SIG_IGN);
	int port = atoi(argv[3]);
	if (!strcmp(argv[1], "serve"))
		return serve(port, argc > 4 ? atoi(argv[4]) : 0);

	int times = argc > 5 ? atoi(argv[5]) : 1;
	for (int i = 0; i < times; i++) {
		char text[64], answer[128];
		snprintf(text, sizeof(text), "fib %d", atoi(argv[4]));
		recce_seq_begin("ask-fib");
		ask(port, text, answer, sizeof(answer));
		recce_seq_end();
		printf("fib(%d) = %s\n", atoi(argv[4]), answer);
	}
	fflush(stdout);
	pause();
	return 0;
}
