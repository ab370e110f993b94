/*
 * A bump allocator for objects that live and die together: memory comes
 * from large chunks and is freed all at once by arena_release(), so that
 * adding an object costs no malloc() until a chunk is full. Allocations are
 * aligned for any type (max_align_t).
 *
 * Ownership: the caller owns the struct (arena_init/arena_release); the
 * arena owns its chunks and everything allocated from them.
 */
#ifndef RECCE_ARENA_H
#define RECCE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks;
	size_t bytes; /* held in chunks, headers included */
};

void arena_init(struct arena *a);
void arena_release(struct arena *a);

/* n bytes (n may exceed a chunk), or NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t n);

#endif
