/*
 * The range table (see ranges.h). After sorting by start (and, for equal
 * starts, larger ranges first), each range gets a link to the innermost
 * earlier range that contains it, computed with a stack in one pass. An
 * address then starts at the last range starting at or below it: if that
 * one does not contain the address, the innermost one that does is among
 * its enclosing ranges, since properly nested ranges that start before
 * the address and reach past it must contain that last range's start.
 */
#include "util/ranges.h"

#include "util/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ranges_init(struct ranges *t)
{
	memset(t, 0, sizeof(*t));
}

void ranges_release(struct ranges *t)
{
	free(t->v);
	ranges_init(t);
}

int ranges_add(struct ranges *t, uint64_t lo, uint64_t hi, uint32_t idx, uint32_t rank)
{
	if (hi <= lo)
		return 0;
	if (t->n >= UINT32_MAX - 1)
		return -E2BIG;
	struct range *v = array_reserve(t->v, &t->cap, t->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->v = v;
	t->v[t->n++] = (struct range){lo, hi, idx, rank, 0};
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static void keep_last_per_start(struct ranges *t)
{
	size_t out = 0;

	for (size_t i = 0; i < t->n;) {
		size_t best = i, j = i;
		for (; j < t->n && t->v[j].lo == t->v[i].lo; j++)
			if (t->v[j].rank >= t->v[best].rank)
				best = j;
		t->v[out++] = t->v[best];
		i = j;
	}
	t->n = out;
}

int ranges_finish(struct ranges *t, int keep_last)
{
	uint32_t *stack;
	size_t depth = 0;

	if (t->n == 0)
		return 0;
	qsort(t->v, t->n, sizeof(*t->v), range_cmp);
	if (keep_last)
		keep_last_per_start(t);
	stack = malloc(t->n * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		struct range *r = &t->v[i];
		while (depth > 0) {
			const struct range *top = &t->v[stack[depth - 1]];
			if (top->lo <= r->lo && r->hi <= top->hi)
				break;
			depth--;
		}
		r->parent = depth ? stack[depth - 1] + 1 : 0;
		stack[depth++] = (uint32_t)i;
	}
	free(stack);
	return 0;
}

const struct range *ranges_find(const struct ranges *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct range *r = &t->v[lo - 1];
	for (int steps = 0; steps < RANGES_MAX_NESTING; steps++) {
		if (addr < r->hi)
			return r;
		if (!r->parent)
			return NULL;
		r = &t->v[r->parent - 1];
	}
	return NULL;
}
