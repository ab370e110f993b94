/*
 * The one hash table of recce: open addressing with linear probing over
 * slots of two 64-bit words, a key and a value. The key is either the
 * caller's item itself (integers: addresses, pids, see u64map.h) or a
 * full hash of it (names, stacks, frames: util/hash.h), in which case the
 * value is an index into, or a pointer to, the caller's own array and an
 * equality callback tells true matches from collisions. Keeping the whole
 * hash in the slot means growth never calls back into the caller, and a
 * probe compares items only when 64 bits already agree.
 *
 * Slot positions come from the key through splitmix64's finalizer, so
 * page-aligned addresses and small integers spread as well as hashes do.
 * The table doubles at half full and never removes: every user builds a
 * table, reads it and frees it whole.
 *
 * Ownership: the caller owns the struct (htab_init/htab_release); the
 * table owns its slots.
 */
#ifndef RECCE_UTIL_HTAB_H
#define RECCE_UTIL_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct htab_slot {
	uint64_t key; /* 0 marks a free slot; a key of 0 is stored as 1 */
	uint64_t val;
};

struct htab {
	struct htab_slot *slots;
	size_t cap, n; /* cap is 0 or a power of two */
};

/* Says whether the caller's item behind val is the one looked for. */
typedef int (*htab_eq_fn)(const void *ctx, uint64_t val);

void htab_init(struct htab *t);
void htab_release(struct htab *t);

/*
 * The slot with this key whose value eq accepts (eq NULL: the first slot
 * with this key), or NULL. Keys 0 and 1 are one key here: a caller whose
 * keys are the items themselves keeps 0 apart.
 */
struct htab_slot *htab_find(const struct htab *t, uint64_t key, htab_eq_fn eq, const void *ctx);

/*
 * Adds key -> val without looking for an equal entry (find first). Returns
 * the new slot, valid until the next add, or NULL when out of memory (the
 * table is then unchanged).
 */
struct htab_slot *htab_add(struct htab *t, uint64_t key, uint64_t val);

static inline size_t htab_count(const struct htab *t)
{
	return t->n;
}

#endif
