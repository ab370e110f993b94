/*
 * Following librecce spans while recording (see span-follow.h): one ring
 * reader per process, opened when its file appears, drained into one
 * span track.
 */
#include "events/span-follow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events/ring-read.h"
#include "util/clock.h"
#include "util/evloop.h"

#define DRAIN_NS (50 * 1000000LL)
#define RETRY_NS (200 * 1000000LL)

struct followed {
	pid_t pid;
	int open; /* reader is open */
	int gone; /* no process, or its file failed: not tried again */
	uint64_t next_try;
	struct ring_reader reader;
};

struct span_follow {
	struct followed *procs;
	size_t n;
	struct span_track *track;
	struct ring_event *events;
	size_t cap;
	struct evloop *loop;
	int timer;
	struct span_follow_stats stats;
};

int span_follow_new(const pid_t *pids, size_t n, struct span_follow **out)
{
	struct span_follow *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->procs = calloc(n ? n : 1, sizeof(*f->procs));
	f->track = span_track_new();
	if (!f->procs || !f->track) {
		span_follow_free(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		f->procs[i].pid = pids[i];
	f->n = n;
	*out = f;
	return 0;
}

static void failed(struct span_follow *f, struct followed *p, int err, int opening)
{
	if (!f->stats.err) {
		f->stats.err = err;
		f->stats.err_pid = p->pid;
		f->stats.err_opening = opening;
	}
}

static void drain_one(struct span_follow *f, size_t i, int last)
{
	struct followed *p = &f->procs[i];
	uint64_t now = time_now_ns(CLOCK_MONOTONIC);

	if (p->gone)
		return;
	if (!p->open) {
		if (!last && now < p->next_try)
			return;
		char path[4096];
		int err = ring_reader_open_pid(&p->reader, p->pid, path, sizeof(path));
		p->next_try = now + RETRY_NS;
		if (err && err != -ENOENT && err != -ESRCH)
			failed(f, p, err, 1); /* a file recce will not read */
		if (err && err != -ENOENT)
			p->gone = 1;
		if (err)
			return;
		p->open = 1;
		f->stats.files++;
	}
	size_t n = 0;
	int err = ring_reader_drain(&p->reader, &f->events, &n, &f->cap);
	int terr = span_track_feed(f->track, (unsigned)i, &p->reader, f->events, n);
	f->stats.events += n;
	if (err || terr) {
		/* What was read is kept; from here the process is unknown
		 * (the track, when full, says so itself). */
		if (err || !span_track_full(f->track))
			failed(f, p, err ? err : terr, 0);
		p->gone = 1;
		span_track_stop(f->track, (unsigned)i, &p->reader, time_now_ns(CLOCK_REALTIME));
		return;
	}
	if (last)
		span_track_end(f->track, (unsigned)i, &p->reader);
}

static void on_timer(void *arg, int64_t due_ns)
{
	struct span_follow *f = arg;

	(void)due_ns;
	for (size_t i = 0; i < f->n; i++)
		drain_one(f, i, 0);
}

int span_follow_attach(struct span_follow *f, struct evloop *loop)
{
	on_timer(f, 0);
	int id = evloop_timer_add(loop, (int64_t)time_now_ns(CLOCK_MONOTONIC) + DRAIN_NS, DRAIN_NS,
				  on_timer, f);
	if (id < 0)
		return id;
	f->loop = loop;
	f->timer = id;
	return 0;
}

void span_follow_finish(struct span_follow *f)
{
	if (f->loop)
		evloop_timer_remove(f->loop, f->timer);
	f->loop = NULL;
	for (size_t i = 0; i < f->n; i++)
		drain_one(f, i, 1);
}

const struct span_track *span_follow_track(const struct span_follow *f)
{
	return f->track;
}

void span_follow_get_stats(const struct span_follow *f, struct span_follow_stats *st)
{
	*st = f->stats;
	st->lost = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i].open)
			st->lost += ring_reader_lost(&f->procs[i].reader);
	st->spans = span_track_spans(f->track);
}

void span_follow_free(struct span_follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->procs && i < f->n; i++)
		if (f->procs[i].open)
			ring_reader_release(&f->procs[i].reader);
	free(f->procs);
	free(f->events);
	span_track_free(f->track);
	free(f);
}
