/*
 * The 64-bit hash map (see u64map.h). Keys are scrambled with the
 * splitmix64 finalizer so that page-aligned addresses and small pids
 * spread over the table; the load factor stays at or under one half so
 * that probe runs stay short.
 */
#include "util/u64map.h"

#include <errno.h>
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

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	u64map_init(m);
}

static size_t slot_of(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = mix(key) & mask;

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (key == 0) {
		if (m->has_zero && val)
			*val = m->zero_val;
		return m->has_zero;
	}
	if (m->cap == 0)
		return 0;
	size_t i = slot_of(m, key);
	if (!m->keys[i])
		return 0;
	if (val)
		*val = m->vals[i];
	return 1;
}

static int grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct u64map n = {.cap = ncap};

	if (ncap < m->cap)
		return -ENOMEM;
	n.keys = calloc(ncap, sizeof(*n.keys));
	n.vals = malloc(ncap * sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = slot_of(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = n.keys;
	m->vals = n.vals;
	m->cap = ncap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if (key == 0) {
		m->n += !m->has_zero;
		m->has_zero = 1;
		m->zero_val = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap) {
		int rc = grow(m);
		if (rc < 0)
			return rc;
	}
	size_t i = slot_of(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

size_t u64map_count(const struct u64map *m)
{
	return m->n;
}
