/*
 * The string pool (see strpool.h). Copies live in an arena, so interning
 * costs no malloc per string; the hash table holds pointers to the
 * copies under their FNV-1a hash.
 */
#include "util/strpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

void strpool_init(struct strpool *p)
{
	memset(p, 0, sizeof(*p));
	arena_init(&p->arena);
	htab_init(&p->set);
}

void strpool_release(struct strpool *p)
{
	arena_release(&p->arena);
	htab_release(&p->set);
	strpool_init(p);
}

struct wanted {
	const char *s;
	size_t len;
};

static int same_string(const void *ctx, uint64_t val)
{
	const struct wanted *w = ctx;
	const char *c = (const char *)(uintptr_t)val;

	return strncmp(c, w->s, w->len) == 0 && c[w->len] == '\0';
}

const char *strpool_intern_len(struct strpool *p, const char *s, size_t len)
{
	struct wanted w = {s, len};
	uint64_t h = hash_fnv1a_bytes(HASH_FNV1A_INIT, s, len);
	struct htab_slot *hit = htab_find(&p->set, h, same_string, &w);

	if (hit)
		return (const char *)(uintptr_t)hit->val;
	char *copy = arena_alloc(&p->arena, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (!htab_add(&p->set, h, (uintptr_t)copy))
		return NULL;
	return copy;
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	if (!s)
		s = "";
	return strpool_intern_len(p, s, strlen(s));
}
