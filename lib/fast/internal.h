/*
 * What the two recorders of librecce-fast.so share: fast.c (the file,
 * the rings, the watchdog, recce_fast_hit for calls) and alloc.c
 * (recce_fast_alloc for sampled allocations). Each thread that records
 * writes into a ring of its own (struct writer, claimed by
 * fast_writer_ready()).
 */
#ifndef RECCE_LIB_FAST_INTERNAL_H
#define RECCE_LIB_FAST_INTERNAL_H

#include <stdint.h>

#include "inject/fast-format.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* The file of the trace now running, and the number of traces started
 * (set before cur): a writer that recorded into an earlier file at the
 * same address tells them apart by it. */
extern struct recce_fast_header *volatile fast_cur HIDDEN;
extern volatile uint32_t fast_starts HIDDEN;

/* Set in a child forked while a trace ran that could not be traced: it
 * records nothing. */
extern volatile int fast_forked HIDDEN;

/* The calling thread's ring, in the file it was claimed in; and, in an
 * allocation trace, its sampling state. */
struct writer {
	struct recce_fast_header *file;
	struct recce_fast_slot *slot;
	struct recce_fast_record *recs;
	uint64_t mask;
	uint64_t retry; /* no slot was left: the CPU clock's reading to look again at */
	uint32_t start; /* the start number file had when the slot was claimed */
	int32_t tid, pid;
	int busy; /* in the recorder: a signal handler's call is not recorded */
	/* Allocations: bytes left before the next sample, the state of the
	 * draws' random numbers,
	 * the sampled call in flight (the address of its return address,
	 * 0: none; posix_memalign's result pointer), and the thread's stack
	 * as found when it claimed its ring ([lo, hi), 0: unknown). */
	int64_t left;
	uint64_t rng;
	uint64_t pending_sp, pending_result;
	uint64_t stack_lo, stack_hi;
};
extern __thread struct writer fast_me HIDDEN __attribute__((tls_model("initial-exec")));

static inline uint64_t fast_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The calling thread's ring in h, claimed if it has none in it (the
 * program's errno kept); 0, or -1 when no slot is left. Inline: every
 * event asks, and all but a thread's first find it there. */
int fast_writer_claim(struct recce_fast_header *h, uint32_t start) HIDDEN
    __attribute__((noinline));
static inline int fast_writer_ready(struct recce_fast_header *h)
{
	uint32_t start = fast_starts;

	if (__builtin_expect(fast_me.file == h && fast_me.start == start, 1))
		return 0;
	return fast_writer_claim(h, start);
}

/* alloc.c: an allocation trace starts (its table of sampled addresses
 * emptied); the calling thread claimed a ring in one (its sampling state
 * reset, its stack found; may ask the kernel). */
void fast_alloc_start(void) HIDDEN;
void fast_alloc_claimed(struct recce_fast_header *h) HIDDEN;

#endif
