/*
 * The agent protocol's framing (proto/agent.proto): every frame is a
 * 4-byte big-endian length, then one Envelope message of that many bytes.
 * A frame longer than FRAME_MAX, or one that does not decode, is an error
 * that closes its connection; fields and messages a side does not know
 * are skipped by the decoder.
 *
 * A frame_conn buffers what a connection has read so far, so that frames
 * split across reads, or several in one read, come out whole.
 */
#ifndef RECCE_FRAME_H
#define RECCE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "agent.pb-c.h"

#define FRAME_MAX	  (16u << 20)	/* bytes of one Envelope */
#define FRAME_VERSION	  1		/* the protocol's version, in Hello */
#define FRAME_FILE_CHUNK  (1u << 20)	/* bytes of a file per File frame */
#define PROGRESS_EVERY_NS 1000000000ULL /* a long operation's Progress, at most this often */

typedef Recce__Agent__Envelope Envelope;

/* Decodes the frame at the start of buf[len]: 1 with *env (freed with
 * frame_free()) and *used bytes, 0 when more bytes are needed, -EBADMSG
 * for a frame over FRAME_MAX or one that does not decode, -ENOMEM. */
int frame_decode(const uint8_t *buf, size_t len, size_t *used, Envelope **env);
void frame_free(Envelope *env);

/* Encodes env as one frame into a new buffer (*out, freed with free()),
 * *len bytes. Returns 0, -E2BIG (over FRAME_MAX) or -ENOMEM. */
int frame_encode(const Envelope *env, uint8_t **out, size_t *len);

/* Writes env as one frame to fd, whole (retrying short writes and EINTR).
 * Returns 0 or -errno (-EPIPE: the peer is gone). */
int frame_send(int fd, const Envelope *env);

/* Fills *e: an Envelope of request id holding msg, a message of the
 * body kind (a Recce__Agent__Hello * for a hello...). Returns 0, or
 * -EINVAL for a kind it does not know. */
int frame_envelope(Envelope *e, uint64_t id, Recce__Agent__Envelope__BodyCase kind, void *msg);

/* frame_send() of an Envelope of request id holding msg, a message of the
 * body kind (a Recce__Agent__Hello * for a hello...). */
int frame_send_msg(int fd, uint64_t id, Recce__Agent__Envelope__BodyCase kind, void *msg);

struct frame_conn {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	size_t max; /* the longest frame it takes (FRAME_MAX unless set lower) */
};

void frame_conn_init(struct frame_conn *c, int fd);
void frame_conn_release(struct frame_conn *c);

/* Reads once from the connection. Returns the bytes read, 0 at the end
 * of the stream, or -errno. */
long frame_conn_fill(struct frame_conn *c);

/* The next whole frame read so far: 1 with *env, 0 when none is complete,
 * -EBADMSG (also for a frame that says it is longer than c->max, as soon
 * as its length is read) or -ENOMEM (the connection is then to be
 * closed). */
int frame_conn_next(struct frame_conn *c, Envelope **env);

/* Blocks until a whole frame arrives: 1 with *env, 0 at the end of the
 * stream, -EBADMSG, -ETIMEDOUT after timeout_ms (< 0: none), -errno. */
int frame_conn_wait(struct frame_conn *c, Envelope **env, int timeout_ms);

#endif
