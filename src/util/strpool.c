/*
 * The string pool (see strpool.h). Copies live in an arena, so interning
 * costs no malloc per string; the hash set holds pointers to the copies
 * and doubles when it is half full.
 */
#include "util/strpool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

void strpool_init(struct strpool *p)
{
	memset(p, 0, sizeof(*p));
	arena_init(&p->arena);
}

void strpool_release(struct strpool *p)
{
	arena_release(&p->arena);
	free(p->slots);
	strpool_init(p);
}

static uint64_t hash_mem(const char *s, size_t len)
{
	return hash_fnv1a_bytes(HASH_FNV1A_INIT, s, len);
}

static int slots_grow(struct strpool *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 256;
	const char **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		const char *s = p->slots[i];
		if (!s)
			continue;
		size_t j = hash_mem(s, strlen(s)) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = s;
	}
	free(p->slots);
	p->slots = n;
	p->cap = ncap;
	return 0;
}

const char *strpool_intern_len(struct strpool *p, const char *s, size_t len)
{
	if ((p->n + 1) * 2 > p->cap && slots_grow(p) < 0)
		return NULL;
	size_t mask = p->cap - 1;
	size_t i = hash_mem(s, len) & mask;
	for (; p->slots[i]; i = (i + 1) & mask) {
		const char *c = p->slots[i];
		if (strncmp(c, s, len) == 0 && c[len] == '\0')
			return c;
	}
	char *copy = arena_alloc(&p->arena, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	p->slots[i] = copy;
	p->n++;
	return copy;
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	if (!s)
		s = "";
	return strpool_intern_len(p, s, strlen(s));
}
