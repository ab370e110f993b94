/*
 * A table of address ranges [lo, hi) answering "which is the innermost
 * range containing this address": the symbol tables, DWARF functions and
 * units of the symbolizer, and the perf-map and kallsyms tables. Ranges
 * may nest (an inlined function inside its caller) and may repeat (symbol
 * aliases); among equal ranges the one with the highest rank wins.
 *
 * Use: ranges_add() every range, ranges_finish() once (it may be called
 * again after more ranges are added), then ranges_find(). A lookup costs
 * a binary search plus a walk up the nesting, which is capped: ranges that
 * nest deeper than RANGES_MAX_NESTING (only hostile input does) are not
 * found rather than found slowly.
 *
 * Ownership: the caller owns the struct (ranges_init/ranges_release).
 */
#ifndef RECCE_RANGES_H
#define RECCE_RANGES_H

#include <stddef.h>
#include <stdint.h>

#define RANGES_MAX_NESTING 256

struct range {
	uint64_t lo, hi;
	uint32_t idx;	 /* the caller's payload, e.g. an index into its array */
	uint32_t rank;	 /* tie-break among equal ranges: higher wins */
	uint32_t parent; /* 1 + index of the innermost range containing this one; 0: none */
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

void ranges_init(struct ranges *t);
void ranges_release(struct ranges *t);

/* Adds [lo, hi); empty ranges (hi <= lo) are ignored. Returns 0, -ENOMEM,
 * or -E2BIG past 2^32 - 2 ranges. */
int ranges_add(struct ranges *t, uint64_t lo, uint64_t hi, uint32_t idx, uint32_t rank);

/* Sorts and links the table. With keep_last_per_start, of the ranges that
 * start at the same address only the one with the highest rank is kept
 * (a perf map's later line replaces an earlier one). Returns 0 or -ENOMEM. */
int ranges_finish(struct ranges *t, int keep_last_per_start);

/* The innermost range containing addr, or NULL. */
const struct range *ranges_find(const struct ranges *t, uint64_t addr);

#endif
