/*
 * Allocation samples for `recce record --event alloc`, from the records
 * the allocation program sends (perf/alloc-bpf.h): each sample is added to
 * the allocation aggregate at once, weighted by what it stands for (1/p
 * allocations and size/p bytes, p = 1 - exp(-size / interval)); its
 * address, from the call's return, keeps it among the live ones until a
 * free of that address arrives. At the end the live ones go to the in-use
 * aggregate with the same weights.
 *
 * Ownership: alloc_samples_new() returns a heap object freed by
 * alloc_samples_free(); it borrows the two aggregates.
 */
#ifndef RECCE_ALLOC_SAMPLES_H
#define RECCE_ALLOC_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct aggregate;
struct alloc_raw;
struct alloc_samples;

struct alloc_samples_stats {
	uint64_t samples;   /* allocations sampled */
	uint64_t frees;	    /* sampled allocations freed */
	uint64_t live;	    /* sampled allocations still in use at the end */
	uint64_t unfollowed; /* sampled allocations with no block to follow: their result
				not seen (still running at the end, its record lost) or none */
	uint64_t unmatched; /* returns without their sample, or samples without their return */
	uint64_t nested;    /* samples of the allocator calling itself, left out */
	uint64_t objects;   /* allocations they stand for */
	uint64_t bytes;	    /* bytes they stand for */
};

/* inside(ctx, pid, addr) says whether a call from addr is the allocator
 * calling itself (a sample of it is left out); may be NULL. */
struct alloc_samples *alloc_samples_new(uint64_t interval, struct aggregate *alloc,
					struct aggregate *inuse,
					int (*inside)(void *ctx, pid_t pid, uint64_t addr),
					void *ctx);
void alloc_samples_free(struct alloc_samples *as);

/* One record of thread tid of process pid, with the stack perf took with
 * it (used by samples only; the caller's frame is put back where a frame
 * pointer walk from a function's first instruction misses it). Returns 0,
 * -ENOMEM, or -EBADMSG for a record that is not one. */
int alloc_samples_add(struct alloc_samples *as, pid_t pid, pid_t tid, const void *raw,
		      size_t raw_size, const uint64_t *frames, size_t n);

/* Adds the allocations still live to the in-use aggregate, once, and
 * counts those whose result never came: from then on every sample is
 * freed, live or unfollowed. Returns 0 or -ENOMEM. */
int alloc_samples_finish(struct alloc_samples *as);

/* Calls fn with each sampled allocation still in use: its process,
 * thread, stack, and what it stands for. */
void alloc_samples_each_live(const struct alloc_samples *as,
			     void (*fn)(void *ctx, pid_t pid, pid_t tid, const uint64_t *frames,
					size_t n, uint64_t objects, uint64_t bytes),
			     void *ctx);

void alloc_samples_get_stats(const struct alloc_samples *as, struct alloc_samples_stats *st);

/* What one sampled allocation of size bytes stands for, sampled every
 * interval bytes on average. */
void alloc_weight(uint64_t size, uint64_t interval, uint64_t *objects, uint64_t *bytes);

#endif
