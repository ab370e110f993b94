/*
 * What stays in use, by stack, over time (`recce record -e alloc
 * --leaks`): at regular snapshots the sampled allocations still in use
 * are summed by stack; at the end, a stack whose bytes in use never went
 * down from one snapshot to the next, went up at two of them at least,
 * and whose sampled blocks in use grew by more than chance explains (three
 * times the square root of the first count and the last), is one whose
 * allocations only grow: a leak, or a cache that has not filled yet. Its
 * growth goes to an aggregate of its own (the profile's growing_objects
 * and growing_space). A sampled block of a stack that is freed lowers
 * that stack's bytes in use, so a stack that churns never qualifies.
 *
 * At most GROWTH_POINTS snapshots are kept: when full, every other one
 * is dropped and the interval doubles, so a long recording keeps its
 * whole span.
 *
 * Ownership: alloc_growth_new() returns a heap object freed by
 * alloc_growth_free(); it borrows the aggregate.
 */
#ifndef RECCE_SAMPLING_ALLOC_GROWTH_H
#define RECCE_SAMPLING_ALLOC_GROWTH_H

#include <stddef.h>
#include <stdint.h>

struct aggregate;
struct alloc_growth;
struct alloc_samples;

#define GROWTH_POINTS 64

/* Snapshots every every_ns, the growing stacks to growing at the end.
 * NULL when out of memory. */
struct alloc_growth *alloc_growth_new(uint64_t every_ns, struct aggregate *growing);
void alloc_growth_free(struct alloc_growth *g);

/* Takes a snapshot of as's allocations in use if one is due at now_ns
 * (CLOCK_MONOTONIC; the first is due at once). Returns 0 or -ENOMEM. */
int alloc_growth_tick(struct alloc_growth *g, const struct alloc_samples *as, uint64_t now_ns);

/* A last snapshot, and the stacks that only grew, with their growth from
 * the first snapshot to the last, to the aggregate. Returns how many
 * stacks, or -ENOMEM. */
int alloc_growth_finish(struct alloc_growth *g, const struct alloc_samples *as);

/* Snapshots kept, and the time between two of them. */
void alloc_growth_span(const struct alloc_growth *g, size_t *snapshots, uint64_t *every_ns);

#endif
