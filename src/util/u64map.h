/*
 * A map from 64-bit keys to 64-bit values: the lookup tables of the
 * symbolizer and the process registry, keyed by addresses, DWARF unit
 * offsets and pids. A thin layer over the one hash table (htab.h) whose
 * keys are the integers themselves; key 0 lives beside it. A value that
 * is a pointer is stored as (uintptr_t). There is no removal: these tables
 * only grow until they are released.
 *
 * Ownership: the caller owns the struct (u64map_init/u64map_release); the
 * map owns its arrays.
 */
#ifndef RECCE_U64MAP_H
#define RECCE_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/htab.h"

struct u64map {
	struct htab table; /* every key but 0 */
	int has_zero;	   /* key 0 itself lives outside the table */
	uint64_t zero_val;
};

void u64map_init(struct u64map *m);
void u64map_release(struct u64map *m);

/* Returns 1 and sets *val (if val is not NULL) when key is present, else 0. */
int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);

/* Inserts key or replaces its value. Returns 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);

size_t u64map_count(const struct u64map *m);

/* Calls fn for every entry, in no particular order. fn must not put. */
void u64map_each(const struct u64map *m, void (*fn)(void *ctx, uint64_t key, uint64_t val),
		 void *ctx);

#endif
