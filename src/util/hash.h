/*
 * The one hash of names and bytes in recce: FNV-1a, 64 bits for tables
 * keyed by text (string pools, report rows, stacks) and 32 bits where a
 * value must be the same on every machine and run (the flamegraph's
 * colours). FNV-1a is short, has no seed and spreads names well enough
 * for open addressing, since the one hash table (htab.h) scrambles every
 * key with splitmix64's finalizer before it picks a slot. Integer keys
 * need no hash of their own for that reason.
 *
 * A hash over several fields starts at HASH_FNV1A_INIT and folds each
 * field in turn; a separator byte between two strings keeps ("ab", "c")
 * and ("a", "bc") apart.
 */
#ifndef RECCE_UTIL_HASH_H
#define RECCE_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_INIT	 14695981039346656037ULL /* 0xcbf29ce484222325 */
#define HASH_FNV1A_PRIME 1099511628211ULL

/* Folds one value (a byte, or a whole integer at once) into h. */
static inline uint64_t hash_fnv1a_value(uint64_t h, uint64_t v)
{
	return (h ^ v) * HASH_FNV1A_PRIME;
}

/* Folds n bytes into h. */
static inline uint64_t hash_fnv1a_bytes(uint64_t h, const void *data, size_t n)
{
	const unsigned char *s = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * HASH_FNV1A_PRIME;
	return h;
}

/* Folds a NUL-terminated string, without its NUL, into h. */
static inline uint64_t hash_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_FNV1A_PRIME;
	return h;
}

/* The 32-bit FNV-1a of a string: stable across runs and machines. */
static inline uint32_t hash_fnv1a32_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

#endif
