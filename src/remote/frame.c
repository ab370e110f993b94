/*
 * The agent protocol's frames, in and out (see frame.h).
 */
#include "remote/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/readall.h"

int frame_decode(const uint8_t *buf, size_t len, size_t *used, Envelope **env)
{
	if (len < 4)
		return 0;
	uint32_t n =
	    (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	if (n > FRAME_MAX)
		return -EBADMSG;
	if (len - 4 < n)
		return 0;
	Envelope *e = recce__agent__envelope__unpack(NULL, n, buf + 4);
	if (!e)
		return -EBADMSG;
	*env = e;
	*used = 4 + (size_t)n;
	return 1;
}

void frame_free(Envelope *env)
{
	if (env)
		recce__agent__envelope__free_unpacked(env, NULL);
}

int frame_encode(const Envelope *env, uint8_t **out, size_t *len)
{
	size_t n = recce__agent__envelope__get_packed_size(env);

	if (n > FRAME_MAX)
		return -E2BIG;
	uint8_t *b = malloc(4 + n);
	if (!b)
		return -ENOMEM;
	b[0] = (uint8_t)(n >> 24);
	b[1] = (uint8_t)(n >> 16);
	b[2] = (uint8_t)(n >> 8);
	b[3] = (uint8_t)n;
	recce__agent__envelope__pack(env, b + 4);
	*out = b;
	*len = 4 + n;
	return 0;
}

int frame_send(int fd, const Envelope *env)
{
	uint8_t *b;
	size_t len;
	int err = frame_encode(env, &b, &len);

	if (err)
		return err;
	err = write_all(fd, b, len);
	free(b);
	return err == -EIO ? -EPIPE : err;
}

int frame_envelope(Envelope *e, uint64_t id, Recce__Agent__Envelope__BodyCase kind, void *msg)
{
	Envelope init = RECCE__AGENT__ENVELOPE__INIT;

	*e = init;
	e->id = id;
	e->body_case = kind;
	switch (kind) {
	case RECCE__AGENT__ENVELOPE__BODY_HELLO:
		e->hello = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_RUN:
		e->run = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_OUTPUT:
		e->output = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_FILE:
		e->file = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_EXIT:
		e->exit = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_CANCEL:
		e->cancel = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_ERROR:
		e->error = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_FILES:
		e->files = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_FILE_LIST:
		e->file_list = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_CLOCK:
		e->clock = msg;
		break;
	case RECCE__AGENT__ENVELOPE__BODY_PROGRESS:
		e->progress = msg;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int frame_send_msg(int fd, uint64_t id, Recce__Agent__Envelope__BodyCase kind, void *msg)
{
	Envelope e;
	int err = frame_envelope(&e, id, kind, msg);

	return err ? err : frame_send(fd, &e);
}

void frame_conn_init(struct frame_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->max = FRAME_MAX;
}

void frame_conn_release(struct frame_conn *c)
{
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

long frame_conn_fill(struct frame_conn *c)
{
	uint8_t *b = array_reserve(c->buf, &c->cap, c->len + 65536, 1);

	if (!b)
		return -ENOMEM;
	c->buf = b;
	ssize_t r;
	do
		r = read(c->fd, c->buf + c->len, c->cap - c->len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	c->len += (size_t)r;
	return (long)r;
}

int frame_conn_next(struct frame_conn *c, Envelope **env)
{
	size_t used;

	/* Refused at its length: a client holds no more than max of ours. */
	if (c->len >= 4 && ((uint32_t)c->buf[0] << 24 | (uint32_t)c->buf[1] << 16 |
			    (uint32_t)c->buf[2] << 8 | c->buf[3]) > c->max)
		return -EBADMSG;
	int rc = frame_decode(c->buf, c->len, &used, env);

	if (rc == 1) {
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	return rc;
}

int frame_conn_wait(struct frame_conn *c, Envelope **env, int timeout_ms)
{
	int64_t deadline =
	    timeout_ms < 0 ? INT64_MAX
			   : (int64_t)time_now_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000;

	for (;;) {
		int rc = frame_conn_next(c, env);
		if (rc)
			return rc;
		int n = evloop_wait_fd(c->fd, POLLIN, deadline);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		if (n == 0)
			return -ETIMEDOUT;
		long r = frame_conn_fill(c);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return c->len ? -EBADMSG : 0; /* a truncated frame */
	}
}
