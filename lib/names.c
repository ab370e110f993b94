/*
 * Names interned once into the event file, so that a record carries a
 * 32-bit id instead of a string. The names area is append-only: a writer
 * takes room with one atomic add, writes the entry, then publishes its
 * offset into the open-addressing index with a compare-and-swap. Two
 * threads that add the same name at once both write an entry; the one
 * whose swap loses uses the winner's, and its own bytes stay unused. No
 * lock, no allocation; a full area or index gives 0 ("no name"), which
 * the caller counts as a dropped event.
 */
#include <string.h>

#include "internal.h"

static int entry_is(uint32_t off, const char *name, uint32_t len, uint32_t hash)
{
	const struct recce_name *e = (const struct recce_name *)(lib.names + off);

	return e->hash == hash && e->len == len && memcmp(e->bytes, name, len) == 0;
}

/* Room for a new entry, written but not yet published; 0 if full. */
static uint32_t entry_add(const char *name, uint32_t len, uint32_t hash)
{
	uint32_t need = recce_name_size(len);
	uint32_t *used = &lib.hdr->names_used;
	uint32_t size = lib.hdr->names_size;

	if (__atomic_load_n(used, __ATOMIC_RELAXED) > size - need)
		return 0;
	uint32_t off = __atomic_fetch_add(used, need, __ATOMIC_RELAXED);
	if (off > size - need)
		return 0;
	struct recce_name *e = (struct recce_name *)(lib.names + off);
	e->hash = hash;
	e->len = (uint16_t)len;
	memcpy(e->bytes, name, len);
	e->bytes[len] = '\0';
	return off;
}

uint32_t names_intern(const char *name)
{
	uint32_t len = (uint32_t)strnlen(name, RECCE_NAME_MAX);
	uint32_t hash = recce_name_hash(name, len);
	uint32_t mask = lib.hdr->name_slots - 1;
	uint32_t mine = 0;

	for (uint32_t probe = 0; probe <= mask; probe++) {
		uint32_t *slot = &lib.index[(hash + probe) & mask];
		uint32_t off = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (off == 0) {
			if (!mine)
				mine = entry_add(name, len, hash);
			if (!mine)
				return 0;
			if (__atomic_compare_exchange_n(slot, &off, mine, 0, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE))
				return mine;
			/* Another thread filled this slot first: off is its entry. */
		}
		if (entry_is(off, name, len, hash))
			return off;
	}
	return 0;
}
