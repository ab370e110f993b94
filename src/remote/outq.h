/*
 * What a command says to its client, held for a client that reads slowly.
 *
 * The agent must keep reading a command's output whatever its client
 * does: a command that cannot write stops reading its events, and a
 * target or another client must never wait on one slow reader. So its
 * Output frames queue here, in memory, and go out as the connection
 * takes them (the connection's fd is non-blocking while the queue is in
 * use). Past the queue's limit, whole lines of the standard output are
 * dropped (a line is kept or dropped whole) and counted; a line on its
 * standard error says how many were lost, at most once a second while
 * lines go, and at the end. The standard error is never dropped.
 */
#ifndef RECCE_OUTQ_H
#define RECCE_OUTQ_H

#include <stddef.h>
#include <stdint.h>

#define OUTQ_DEFAULT_LIMIT (8u << 20)	 /* bytes queued before lines are dropped */
#define OUTQ_SAY_EVERY_NS  1000000000ULL /* drops are said at most this often */

struct outq {
	int fd;
	uint64_t id; /* the request the Output frames answer */
	size_t limit;
	uint8_t *buf; /* encoded frames; buf[off..len) still to write */
	size_t off, len, cap;
	int fd_flags;		      /* the fd's flags before, restored by outq_finish */
	int line_start;		      /* stream 1's next byte starts a line */
	int dropping;		      /* the current line of stream 1 is being dropped */
	uint64_t dropped, unreported; /* lines dropped in all, and not yet said */
	uint64_t said_at;	      /* CLOCK_MONOTONIC ns of the last line that said so */
};

/* A queue of Output frames of request id, to fd; fd is made non-blocking
 * until outq_finish(). Returns 0 or -errno. */
int outq_init(struct outq *q, int fd, uint64_t id, size_t limit);

/* Queues data[n] of stream (1 standard output, 2 error), dropping lines
 * of stream 1 past the limit. Returns 0 or -ENOMEM. */
int outq_output(struct outq *q, unsigned stream, const uint8_t *data, size_t n);

/* Queues a Progress message (see agent.proto), unless the queue is at
 * its limit: a client that reads slowly misses some. Returns 0 or
 * -ENOMEM. */
int outq_progress(struct outq *q, const char *what, uint64_t done, uint64_t total,
		  const char *unit);

/* Says the lines dropped (at most once a second) and writes what the
 * connection takes now, without waiting. Returns 0, or -errno when the
 * client is gone (-EPIPE, -ECONNRESET...). */
int outq_flush(struct outq *q);

/* Bytes queued and not yet written. */
size_t outq_pending(const struct outq *q);

/* Says any drops not yet said, writes the rest waiting as long as the
 * client takes it, and gives the fd back its flags. Returns 0 or -errno. */
int outq_finish(struct outq *q);

void outq_release(struct outq *q);

#endif
