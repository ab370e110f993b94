/*
 * The hash table (see htab.h): positions from splitmix64's finalizer,
 * linear probing, doubling at half full.
 */
#include "util/htab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t stored_key(uint64_t key)
{
	return key ? key : 1;
}

void htab_init(struct htab *t)
{
	memset(t, 0, sizeof(*t));
}

void htab_release(struct htab *t)
{
	free(t->slots);
	htab_init(t);
}

struct htab_slot *htab_find(const struct htab *t, uint64_t key, htab_eq_fn eq, const void *ctx)
{
	if (t->cap == 0)
		return NULL;
	key = stored_key(key);
	size_t mask = t->cap - 1;
	for (size_t i = mix(key) & mask; t->slots[i].key; i = (i + 1) & mask) {
		struct htab_slot *s = &t->slots[i];
		if (s->key == key && (!eq || eq(ctx, s->val)))
			return s;
	}
	return NULL;
}

static struct htab_slot *free_slot(struct htab_slot *slots, size_t cap, uint64_t key)
{
	size_t mask = cap - 1;
	size_t i = mix(key) & mask;

	while (slots[i].key)
		i = (i + 1) & mask;
	return &slots[i];
}

static int grow(struct htab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	struct htab_slot *n;

	if (ncap < t->cap || ncap > SIZE_MAX / sizeof(*n))
		return -1;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			*free_slot(n, ncap, t->slots[i].key) = t->slots[i];
	free(t->slots);
	t->slots = n;
	t->cap = ncap;
	return 0;
}

struct htab_slot *htab_add(struct htab *t, uint64_t key, uint64_t val)
{
	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	key = stored_key(key);
	struct htab_slot *s = free_slot(t->slots, t->cap, key);
	s->key = key;
	s->val = val;
	t->n++;
	return s;
}
