/*
 * The spans and tokens of each thread over time (see span-track.h).
 *
 * Each thread keeps its spans in the order they began, each with the span
 * it is in (its parent), so the innermost span at a time is found by a
 * binary search for the last span begun by then and a walk up its
 * parents to the first that had not ended. Its token is a list of
 * changes, and its unknown windows a list of [start, end) times.
 */
#include "events/span-track.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "events/ring-format.h"
#include "util/array.h"
#include "util/strpool.h"
#include "util/u64map.h"

#define FOREVER UINT64_MAX

struct span {
	uint64_t start, end; /* end FOREVER while open */
	const char *name;    /* NULL until known */
	uint32_t parent;     /* index + 1 of the span it is in; 0: none */
};

struct token_change {
	uint64_t time;
	enum span_state state;
	uint64_t id_hi, id_lo;
};

struct window {
	uint64_t start, end;
};

struct thread {
	int32_t tid;
	size_t same_tid; /* index + 1 of the thread seen before with this tid */
	uint64_t first_time, last_time;
	uint64_t lost_seen; /* the reader's loss count at its last event */
	int seen;	    /* has had an event */
	int blind;	    /* an older writer lost events: unknown to the end */
	struct span *spans;
	size_t nspans, spans_cap;
	uint32_t *stack; /* open spans, outermost first: indexes into spans */
	size_t depth, stack_cap;
	struct token_change *tokens;
	size_t ntokens, tokens_cap;
	struct window *unknown;
	size_t nunknown, unknown_cap;
};

struct span_track {
	struct thread *threads;
	size_t nthreads, cap;
	struct u64map by_key; /* source << 32 | reader thread -> index + 1 */
	struct u64map by_tid; /* tid -> index + 1 of its latest thread */
	struct strpool names;
	uint64_t used; /* spans and token changes kept, against SPAN_TRACK_MAX */
	uint64_t full_since;
	uint64_t spans_seen;
};

struct span_track *span_track_new(void)
{
	struct span_track *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	u64map_init(&t->by_key);
	u64map_init(&t->by_tid);
	strpool_init(&t->names);
	return t;
}

void span_track_free(struct span_track *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i].spans);
		free(t->threads[i].stack);
		free(t->threads[i].tokens);
		free(t->threads[i].unknown);
	}
	free(t->threads);
	u64map_release(&t->by_key);
	u64map_release(&t->by_tid);
	strpool_release(&t->names);
	free(t);
}

/* The thread of key, made when new. */
static struct thread *thread_of(struct span_track *t, uint64_t key, int32_t tid)
{
	uint64_t v;

	if (u64map_get(&t->by_key, key, &v))
		return &t->threads[v - 1];
	struct thread *grown = array_reserve(t->threads, &t->cap, t->nthreads + 1, sizeof(*grown));
	if (!grown)
		return NULL;
	t->threads = grown;
	struct thread *th = &t->threads[t->nthreads];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	if (u64map_get(&t->by_tid, (uint64_t)(uint32_t)tid, &v))
		th->same_tid = (size_t)v;
	if (u64map_put(&t->by_key, key, t->nthreads + 1) < 0 ||
	    u64map_put(&t->by_tid, (uint64_t)(uint32_t)tid, t->nthreads + 1) < 0)
		return NULL;
	t->nthreads++;
	return th;
}

static int take_one(struct span_track *t, uint64_t time)
{
	if (t->full_since)
		return -ENOMEM;
	if (t->used >= SPAN_TRACK_MAX) {
		t->full_since = time ? time : 1;
		return -ENOMEM;
	}
	t->used++;
	return 0;
}

static int add_unknown(struct thread *th, uint64_t start, uint64_t end)
{
	if (th->nunknown && th->unknown[th->nunknown - 1].end >= start) {
		if (th->unknown[th->nunknown - 1].end < end)
			th->unknown[th->nunknown - 1].end = end; /* one window, grown */
		return 0;
	}
	struct window *grown =
	    array_reserve(th->unknown, &th->unknown_cap, th->nunknown + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	th->unknown = grown;
	th->unknown[th->nunknown++] = (struct window){start, end};
	return 0;
}

/* Begins a span (name NULL: not known yet) inside the open ones. */
static int push(struct span_track *t, struct thread *th, const char *name, uint64_t time)
{
	if (take_one(t, time) < 0)
		return -ENOMEM;
	struct span *grown =
	    array_reserve(th->spans, &th->spans_cap, th->nspans + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	th->spans = grown;
	uint32_t *stack = array_reserve(th->stack, &th->stack_cap, th->depth + 1, sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	th->stack = stack;
	uint32_t parent = th->depth ? th->stack[th->depth - 1] + 1 : 0;
	th->spans[th->nspans] = (struct span){time, FOREVER, name, parent};
	th->stack[th->depth++] = (uint32_t)th->nspans++;
	return 0;
}

static void pop(struct thread *th, uint64_t time)
{
	th->spans[th->stack[--th->depth]].end = time;
}

/* Makes depth spans open: those past it ended, those missing (begun where
 * events were lost) are open from now, their names not known. */
static int settle(struct span_track *t, struct thread *th, size_t depth, uint64_t time)
{
	while (th->depth > depth)
		pop(th, time);
	while (th->depth < depth)
		if (push(t, th, NULL, time) < 0)
			return -ENOMEM;
	return 0;
}

static int set_token(struct span_track *t, struct thread *th, uint64_t time, enum span_state state,
		     uint64_t hi, uint64_t lo)
{
	const struct token_change *last = th->ntokens ? &th->tokens[th->ntokens - 1] : NULL;
	enum span_state now = last ? last->state : SPAN_NONE;

	if (now == state && (state != SPAN_KNOWN || (last->id_hi == hi && last->id_lo == lo)))
		return 0;
	if (take_one(t, time) < 0)
		return -ENOMEM;
	struct token_change *grown =
	    array_reserve(th->tokens, &th->tokens_cap, th->ntokens + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	th->tokens = grown;
	th->tokens[th->ntokens++] = (struct token_change){time, state, hi, lo};
	return 0;
}

/* An event of a writer that says its state in every record. */
static int take_stated(struct span_track *t, struct thread *th, const struct ring_event *e,
		       const char *name, uint64_t time)
{
	size_t depth = e->flags & RECCE_FLAG_DEPTH;
	int err = 0;

	if (depth == RECCE_FLAG_DEPTH) {
		th->blind = 1; /* deeper than the flags count */
		return add_unknown(th, time, FOREVER);
	}
	if (e->kind == RECCE_EV_SPAN_BEGIN && depth > 0) {
		err = settle(t, th, depth - 1, time);
		if (!err)
			err = push(t, th, name, time);
		t->spans_seen++;
	} else if (e->kind == RECCE_EV_SPAN_END) {
		err = settle(t, th, depth + 1, time);
		if (!err) {
			struct span *s = &th->spans[th->stack[th->depth - 1]];
			if (!s->name)
				s->name = name; /* begun where events were lost */
			pop(th, time);
		}
		t->spans_seen++;
	} else {
		err = settle(t, th, depth, time);
	}
	if (err)
		return err;
	if (recce_kind_is_seq(e->kind) && e->kind != RECCE_EV_SEQ_END)
		return set_token(t, th, time, SPAN_KNOWN, e->id_hi, e->id_lo);
	if (!(e->flags & RECCE_FLAG_TOKEN))
		return set_token(t, th, time, SPAN_NONE, 0, 0);
	/* It carries a token: one this track does not know, after a loss. */
	if (!th->ntokens || th->tokens[th->ntokens - 1].state == SPAN_NONE)
		return set_token(t, th, time, SPAN_UNKNOWN, 0, 0);
	return 0;
}

/* An event of an older writer: spans matched by name. */
static int take_unstated(struct span_track *t, struct thread *th, const struct ring_event *e,
			 const char *name, uint64_t time)
{
	if (e->kind == RECCE_EV_SPAN_BEGIN) {
		t->spans_seen++;
		return push(t, th, name, time);
	}
	if (e->kind == RECCE_EV_SPAN_END) {
		t->spans_seen++;
		size_t d = th->depth;
		while (d && th->spans[th->stack[d - 1]].name != name)
			d--;
		if (d)
			settle(t, th, d - 1, time);
		return 0;
	}
	if (e->kind == RECCE_EV_SEQ_END)
		return set_token(t, th, time, SPAN_NONE, 0, 0);
	if (recce_kind_is_seq(e->kind))
		return set_token(t, th, time, SPAN_KNOWN, e->id_hi, e->id_lo);
	return 0;
}

int span_track_feed(struct span_track *t, unsigned source, const struct ring_reader *r,
		    const struct ring_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct ring_event *e = &ev[i];
		if (t->full_since)
			return -ENOMEM;
		if (e->thread >= r->nthreads)
			continue;
		struct thread *th = thread_of(t, (uint64_t)source << 32 | e->thread, e->tid);
		if (!th)
			return -ENOMEM;
		uint64_t time = ring_reader_realtime(r, e->time_ns);
		uint64_t lost = r->threads[e->thread].lost;
		int err = 0;
		if (lost > th->lost_seen) {
			/* Events were lost since its last one read, or before
			 * its first (a ring that went round before recce read it). */
			err = add_unknown(th, th->seen ? th->last_time : 0,
					  (e->flags & RECCE_FLAG_STATE) ? time : FOREVER);
			if (!(e->flags & RECCE_FLAG_STATE))
				th->blind = 1;
			th->lost_seen = lost;
		}
		if (!th->seen)
			th->first_time = time;
		th->seen = 1;
		th->last_time = time;
		if (err || th->blind)
			continue;
		const char *name = strpool_intern(&t->names, e->name);
		if (!name)
			return -ENOMEM;
		err = (e->flags & RECCE_FLAG_STATE) ? take_stated(t, th, e, name, time)
						    : take_unstated(t, th, e, name, time);
		if (err) {
			if (!t->full_since)
				t->full_since = time ? time : 1;
			return err;
		}
	}
	return 0;
}

int span_track_end(struct span_track *t, unsigned source, const struct ring_reader *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct ring_thread *rt = &r->threads[i];
		uint64_t v;
		if (!u64map_get(&t->by_key, (uint64_t)source << 32 | i, &v) && !rt->lost)
			continue; /* wrote nothing recce missed */
		struct thread *th = thread_of(t, (uint64_t)source << 32 | i, rt->tid);
		if (!th)
			return -ENOMEM;
		if (rt->lost > th->lost_seen &&
		    add_unknown(th, th->seen ? th->last_time : 0, FOREVER) < 0)
			return -ENOMEM;
		th->lost_seen = rt->lost;
	}
	return 0;
}

int span_track_stop(struct span_track *t, unsigned source, const struct ring_reader *r,
		    uint64_t realtime_ns)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread *th = thread_of(t, (uint64_t)source << 32 | i, r->threads[i].tid);
		if (!th)
			return -ENOMEM;
		uint64_t from = th->seen && th->last_time < realtime_ns ? th->last_time : realtime_ns;
		if (add_unknown(th, from, FOREVER) < 0)
			return -ENOMEM;
		th->blind = 1;
	}
	return 0;
}

/* The thread of tid at time: of the threads seen with that tid, the last
 * to have begun by then, else the first. */
static const struct thread *thread_at(const struct span_track *t, int32_t tid, uint64_t time)
{
	uint64_t v;

	if (!u64map_get(&t->by_tid, (uint64_t)(uint32_t)tid, &v))
		return NULL;
	const struct thread *th = &t->threads[v - 1];
	while (th->same_tid && (!th->seen || th->first_time > time))
		th = &t->threads[th->same_tid - 1];
	return th;
}

/* In an array of n elements of size bytes, kept in the order of the
 * uint64_t at offset in each: how many of them have it at or before time
 * (the index of the first after it). */
static size_t count_until(const void *base, size_t n, size_t size, size_t offset, uint64_t time)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;
		memcpy(&v, (const char *)base + mid * size + offset, sizeof(v));
		if (v <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int in_unknown(const struct thread *th, uint64_t time)
{
	/* The first window that ends after time. */
	size_t k = count_until(th->unknown, th->nunknown, sizeof(*th->unknown),
			       offsetof(struct window, end), time);
	return k < th->nunknown && th->unknown[k].start <= time;
}

void span_track_at(const struct span_track *t, int32_t tid, uint64_t realtime_ns,
		   struct span_at *out)
{
	memset(out, 0, sizeof(*out));
	const struct thread *th = thread_at(t, tid, realtime_ns);

	if ((t->full_since && realtime_ns >= t->full_since) ||
	    (th && in_unknown(th, realtime_ns))) {
		out->span = out->token = SPAN_UNKNOWN;
		return;
	}
	if (!th)
		return;
	/* The last span begun by then, and up its parents to one still open. */
	size_t k = count_until(th->spans, th->nspans, sizeof(*th->spans),
			       offsetof(struct span, start), realtime_ns);
	while (k) {
		const struct span *s = &th->spans[k - 1];
		if (s->end > realtime_ns) {
			out->span = s->name ? SPAN_KNOWN : SPAN_UNKNOWN;
			out->name = s->name;
			break;
		}
		k = s->parent;
	}
	k = count_until(th->tokens, th->ntokens, sizeof(*th->tokens),
			offsetof(struct token_change, time), realtime_ns);
	if (k) {
		const struct token_change *c = &th->tokens[k - 1];
		out->token = c->state;
		out->id_hi = c->id_hi;
		out->id_lo = c->id_lo;
	}
}

uint64_t span_track_full(const struct span_track *t)
{
	return t->full_since;
}

uint64_t span_track_spans(const struct span_track *t)
{
	return t->spans_seen;
}
