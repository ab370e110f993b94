/*
 * The bump allocator (see arena.h): a list of 64 KiB chunks, newest first;
 * an allocation larger than a chunk gets a chunk of its own.
 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->chunks;

	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	arena_init(a);
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->chunks;

	if (n > SIZE_MAX - sizeof(max_align_t) - sizeof(*c))
		return NULL;
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		a->bytes += sizeof(*c) + size;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}
