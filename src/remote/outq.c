/*
 * A command's output held for a slow client, whole lines dropped past a
 * limit (see outq.h).
 */
#include "remote/outq.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/frame.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/readall.h"

int outq_init(struct outq *q, int fd, uint64_t id, size_t limit)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->id = id;
	q->limit = limit ? limit : OUTQ_DEFAULT_LIMIT;
	q->line_start = 1;
	q->fd_flags = fcntl(fd, F_GETFL);
	if (q->fd_flags < 0 || fcntl(fd, F_SETFL, q->fd_flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

size_t outq_pending(const struct outq *q)
{
	return q->len - q->off;
}

/* Appends msg, a message of the body kind, as one frame. */
static int put_msg(struct outq *q, Recce__Agent__Envelope__BodyCase kind, void *msg)
{
	Envelope e;
	uint8_t *frame;
	size_t len;

	int err = frame_envelope(&e, q->id, kind, msg);
	if (!err)
		err = frame_encode(&e, &frame, &len);
	if (err)
		return err;
	if (q->off && q->off >= q->len / 2) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
	}
	uint8_t *b = array_reserve(q->buf, &q->cap, q->len + len, 1);
	if (!b) {
		free(frame);
		return -ENOMEM;
	}
	q->buf = b;
	memcpy(q->buf + q->len, frame, len);
	q->len += len;
	free(frame);
	return 0;
}

/* Appends data[n] as one Output frame of stream. */
static int put_frame(struct outq *q, unsigned stream, const uint8_t *data, size_t n)
{
	Recce__Agent__Output o = RECCE__AGENT__OUTPUT__INIT;

	o.stream = stream;
	o.data.data = (uint8_t *)data;
	o.data.len = n;
	return put_msg(q, RECCE__AGENT__ENVELOPE__BODY_OUTPUT, &o);
}

int outq_progress(struct outq *q, const char *what, uint64_t done, uint64_t total, const char *unit)
{
	Recce__Agent__Progress p = RECCE__AGENT__PROGRESS__INIT;

	if (outq_pending(q) >= q->limit)
		return 0;
	p.what = (char *)what;
	p.done = done;
	p.total = total;
	p.unit = (char *)unit;
	return put_msg(q, RECCE__AGENT__ENVELOPE__BODY_PROGRESS, &p);
}

/* Stream 1's lines, each kept whole when the queue has room as it
 * starts, else dropped whole. Kept runs are gathered into keep[]. */
static int put_lines(struct outq *q, const uint8_t *data, size_t n)
{
	uint8_t *keep = malloc(n);
	size_t kept = 0, pos = 0;

	if (!keep)
		return -ENOMEM;
	while (pos < n) {
		if (q->line_start)
			q->dropping = outq_pending(q) + kept >= q->limit;
		const uint8_t *nl = memchr(data + pos, '\n', n - pos);
		size_t end = nl ? (size_t)(nl - data) + 1 : n;
		if (q->dropping) {
			if (nl) {
				q->dropped++;
				q->unreported++;
			}
		} else {
			memcpy(keep + kept, data + pos, end - pos);
			kept += end - pos;
		}
		q->line_start = nl != NULL;
		pos = end;
	}
	int err = kept ? put_frame(q, 1, keep, kept) : 0;
	free(keep);
	return err;
}

int outq_output(struct outq *q, unsigned stream, const uint8_t *data, size_t n)
{
	if (stream != 1)
		return put_frame(q, stream, data, n);
	return put_lines(q, data, n);
}

/* The line that says what was dropped since it was last said. */
static int say_drops(struct outq *q)
{
	char msg[200];

	if (!q->unreported)
		return 0;
	int n = snprintf(msg, sizeof(msg),
			 "recce agent: %" PRIu64 " lines of output dropped: this client read "
			 "them too slowly (%" PRIu64 " in all)\n",
			 q->unreported, q->dropped);
	q->unreported = 0;
	return put_frame(q, 2, (const uint8_t *)msg, (size_t)n);
}

int outq_flush(struct outq *q)
{
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);

	/* Drops are said as they happen, at most once a second. */
	if (q->unreported && now >= q->said_at + OUTQ_SAY_EVERY_NS) {
		int err = say_drops(q);
		if (err)
			return err;
		q->said_at = now;
	}
	while (q->off < q->len) {
		ssize_t w = write(q->fd, q->buf + q->off, q->len - q->off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		q->off += (size_t)w;
	}
	return 0;
}

int outq_finish(struct outq *q)
{
	int err = say_drops(q);

	if (fcntl(q->fd, F_SETFL, q->fd_flags) < 0 && !err)
		err = -errno;
	if (!err && q->off < q->len)
		err = write_all(q->fd, q->buf + q->off, q->len - q->off);
	q->off = q->len;
	return err == -EIO ? -EPIPE : err;
}

void outq_release(struct outq *q)
{
	free(q->buf);
	q->buf = NULL;
	q->off = q->len = q->cap = 0;
}
