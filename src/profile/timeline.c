/*
 * Sample timelines (see timeline.h): varint and zig-zag encoding of event
 * deltas into a growing buffer, and a decoder that treats its input as
 * untrusted, since it comes from a file.
 */
#include "profile/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/varint.h"

/* Reads a varint at *at; returns 0, or -EBADMSG when truncated or longer
 * than 64 bits. */
static int varint_get(const unsigned char *buf, size_t len, size_t *at, uint64_t *v)
{
	const uint8_t *p = buf + *at;
	int rc = varint_read(&p, buf + len, v);

	*at = (size_t)(p - buf);
	return rc;
}

void timeline_writer_init(struct timeline_writer *w, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->max = max;
}

void timeline_writer_release(struct timeline_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

int timeline_writer_add(struct timeline_writer *w, uint64_t index, int64_t time_ns, int64_t period)
{
	if (w->max && w->len + 3 * VARINT_MAX > w->max) {
		w->dropped++;
		return -ENOBUFS;
	}
	unsigned char *n = array_reserve(w->buf, &w->cap, w->len + 3 * VARINT_MAX, 1);
	if (!n)
		return -ENOMEM;
	w->buf = n;
	w->len += varint_put(w->buf + w->len, index);
	w->len += varint_put(w->buf + w->len, zigzag(time_ns - w->last_time));
	w->len += varint_put(w->buf + w->len, zigzag(period - w->last_period));
	w->last_time = time_ns;
	w->last_period = period;
	w->count++;
	return 0;
}

int timeline_writer_take(struct timeline_writer *w, unsigned char **buf, size_t *len)
{
	unsigned char head[2 * VARINT_MAX];
	size_t h = varint_put(head, TIMELINE_VERSION);

	h += varint_put(head + h, w->count);
	unsigned char *out = malloc(h + w->len);
	if (!out)
		return -ENOMEM;
	memcpy(out, head, h);
	if (w->len)
		memcpy(out + h, w->buf, w->len);
	*buf = out;
	*len = h + w->len;
	timeline_writer_release(w);
	return 0;
}

int timeline_decode(const unsigned char *buf, size_t len, uint64_t nindex,
		    struct timeline_event **events, size_t *n)
{
	uint64_t version, count, index, dt, dp;
	int64_t time = 0, period = 0;
	size_t at = 0;

	*events = NULL;
	*n = 0;
	if (varint_get(buf, len, &at, &version) || version != TIMELINE_VERSION ||
	    varint_get(buf, len, &at, &count))
		return -EBADMSG;
	/* Each event takes at least three bytes: a count larger than the
	 * bytes allow is a lie, and must not size an allocation. */
	if (count > (len - at) / 3)
		return -EBADMSG;
	if (!count)
		return at == len ? 0 : -EBADMSG;
	struct timeline_event *ev = malloc(count * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (uint64_t i = 0; i < count; i++) {
		/* Sums past int64_t are a malformed file, not a wrap. */
		if (varint_get(buf, len, &at, &index) || varint_get(buf, len, &at, &dt) ||
		    varint_get(buf, len, &at, &dp) || index >= nindex ||
		    __builtin_add_overflow(time, unzigzag(dt), &time) ||
		    __builtin_add_overflow(period, unzigzag(dp), &period)) {
			free(ev);
			return -EBADMSG;
		}
		ev[i] = (struct timeline_event){index, time, period};
	}
	if (at != len) {
		free(ev);
		return -EBADMSG;
	}
	*events = ev;
	*n = (size_t)count;
	return 0;
}

/* An event's place in time order: its time, then where it was added. */
struct in_order {
	int64_t time_ns;
	size_t at;
};

static int by_time_then_place(const void *a, const void *b)
{
	const struct in_order *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int timeline_remap(const struct timeline_event *events, size_t n, const uint64_t *remap,
		   unsigned char **buf, size_t *len)
{
	struct timeline_writer w;
	struct in_order *order = malloc((n ? n : 1) * sizeof(*order));
	size_t kept = 0;
	int ret = 0;

	if (!order)
		return -ENOMEM;
	/* Events come as the sampler handled them: a wait is added when its
	 * thread comes back, after other threads' later samples. */
	for (size_t i = 0; i < n; i++)
		if (remap[events[i].index])
			order[kept++] = (struct in_order){events[i].time_ns, i};
	qsort(order, kept, sizeof(*order), by_time_then_place);
	timeline_writer_init(&w, 0);
	for (size_t k = 0; k < kept && !ret; k++) {
		const struct timeline_event *e = &events[order[k].at];
		ret = timeline_writer_add(&w, remap[e->index] - 1, e->time_ns, e->period);
	}
	free(order);
	if (!ret)
		ret = timeline_writer_take(&w, buf, len);
	timeline_writer_release(&w);
	return ret;
}
