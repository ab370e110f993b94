/*
 * Calls in flight (see trace-calls.h): stacks in an array, found through
 * the hash table by (pid, kind, id).
 */
#include "trace/trace-calls.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/hash.h"

void trace_calls_init(struct trace_calls *c)
{
	memset(c, 0, sizeof(*c));
	htab_init(&c->index);
}

void trace_calls_release(struct trace_calls *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->stacks[i].calls);
	free(c->stacks);
	htab_release(&c->index);
	trace_calls_init(c);
}

struct wanted {
	const struct trace_calls *c;
	uint32_t pid;
	int go;
	uint64_t id;
};

static int same_stack(const void *ctx, uint64_t index)
{
	const struct wanted *w = ctx;
	const struct call_stack *s = &w->c->stacks[index];

	return s->pid == w->pid && s->go == w->go && s->id == w->id;
}

struct call_stack *trace_calls_stack(struct trace_calls *c, uint32_t pid, int go, uint64_t id)
{
	struct wanted w = {c, pid, go, id};
	uint64_t h = hash_fnv1a_value(hash_fnv1a_value(HASH_FNV1A_INIT, pid), id);
	struct htab_slot *hit;

	h = hash_fnv1a_value(h, (uint64_t)go);
	hit = htab_find(&c->index, h, same_stack, &w);
	if (hit)
		return &c->stacks[hit->val];
	if (c->n >= TRACE_CALLS_STACKS)
		return NULL;
	struct call_stack *v = array_reserve(c->stacks, &c->cap, c->n + 1, sizeof(*v));
	if (!v)
		return NULL;
	c->stacks = v;
	struct trace_call *calls = calloc(TRACE_CALLS_DEPTH, sizeof(*calls));
	if (!calls || !htab_add(&c->index, h, c->n)) {
		free(calls);
		return NULL;
	}
	c->stacks[c->n] = (struct call_stack){.pid = pid, .go = go, .id = id, .calls = calls};
	return &c->stacks[c->n++];
}

int trace_calls_live_depth(const struct call_stack *st, uint64_t sp, int is_call)
{
	int d = st->depth;

	while (d > 0 && (st->calls[d - 1].sp < sp || (is_call && st->calls[d - 1].sp == sp)))
		d--;
	return d;
}
