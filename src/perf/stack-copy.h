/*
 * The stack copy that grows while sampling (--call-graph auto without
 * BYTES): each sample's stack is copied as the events ask; when the
 * stacks that ended where the copy did are 1 in 100 of the samples taken
 * with it (4 at least), the events are opened again with a larger copy
 * (perf_events_grow_stack()), up to a most the user of it may lower.
 * Used by the sampler (record -p, -a, --cgroup; the continuous agent,
 * whose rings hold 2 MiB: continuous.h) and by top.
 */
#ifndef RECCE_STACK_COPY_H
#define RECCE_STACK_COPY_H

#include <stddef.h>
#include <stdint.h>

struct perf_events;

struct stack_copy {
	int grows;	     /* 0: the copy stays as it is */
	uint32_t first;	     /* the copy it began with */
	uint32_t now, was;   /* the copy now; before it last grew (0: it never did) */
	uint32_t max;	     /* the most it grows to */
	uint64_t samples;    /* every sample seen */
	uint64_t samples_at; /* of them, taken with the copy as it is now */
	uint64_t cut_at;     /* and of those, cut where it ended */
	uint64_t cut;	     /* every stack cut where its copy ended */
};

/* A copy of bytes, which grows (up to the kernel's most) or not. */
void stack_copy_init(struct stack_copy *c, uint32_t bytes, int grows);

/* Lowers the most the copy grows to (0: the kernel's most). */
void stack_copy_set_max(struct stack_copy *c, uint32_t max);

/* Before the rings are read again (what they hold was taken with the
 * copy as it was): grows the copy of pe's events when the samples seen
 * since it last grew ask for it, to twice the copy or more where the
 * stacks cut wanted (wanted: unwinder_copy_wanted()), running prog_fd
 * (perf_events_grow_stack()). A refusal leaves the copy as it is, for
 * good. Returns 1 when it grew. */
int stack_copy_check(struct stack_copy *c, struct perf_events *pe, uint64_t wanted, int prog_fd);

/* The two halves of it: the copy the samples seen ask for (0: none
 * larger); and that the events now take it. */
uint32_t stack_copy_wants(const struct stack_copy *c, uint64_t wanted);
void stack_copy_grown(struct stack_copy *c, uint32_t bytes);

/* A sample from a record that asked for asked bytes of stack, whose
 * stack was cut where its copy ended (unwind_cut_at_copy()) or not:
 * counted, and when it asked for the copy as it is now, whether it was
 * cut. */
void stack_copy_seen(struct stack_copy *c, uint64_t asked, int cut);

/* Whether the copy grew; the samples taken with smaller copies, and of
 * them those cut where the copy ended. */
int stack_copy_grew(const struct stack_copy *c, uint64_t *before, uint64_t *cut_before);

#endif
