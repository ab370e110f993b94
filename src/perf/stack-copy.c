/*
 * The stack copy that grows while sampling (see stack-copy.h).
 */
#include "perf/stack-copy.h"

#include "perf/perf-events.h"

/* A stack in GROW_PER cut where the copy ended, of the samples taken
 * with the copy as it is now, and GROW_MIN_CUT of them at least. A
 * backend of Debian's postgres under pgbench has 1 stack in 55 to 93
 * cut at 8 KiB, none in 2161 at 16 KiB. */
#define GROW_PER     100
#define GROW_MIN_CUT 4

void stack_copy_init(struct stack_copy *c, uint32_t bytes, int grows)
{
	*c = (struct stack_copy){
	    .grows = grows, .first = bytes, .now = bytes, .max = PERF_EVENTS_MAX_STACK_BYTES};
}

void stack_copy_set_max(struct stack_copy *c, uint32_t max)
{
	c->max = max && max < PERF_EVENTS_MAX_STACK_BYTES ? max : PERF_EVENTS_MAX_STACK_BYTES;
}

uint32_t stack_copy_wants(const struct stack_copy *c, uint64_t wanted)
{
	if (!c->grows || c->now >= c->max)
		return 0;
	if (c->cut_at < GROW_MIN_CUT || c->cut_at * GROW_PER < c->samples_at)
		return 0;
	/* Twice the copy, or more where the stacks cut needed more for their
	 * next frame, as the advice at the end says. */
	uint64_t more = (uint64_t)c->now * 2;
	while (more < wanted)
		more *= 2;
	return more > c->max ? c->max : (uint32_t)more;
}

void stack_copy_grown(struct stack_copy *c, uint32_t bytes)
{
	c->was = c->now;
	c->now = bytes;
	c->samples_at = 0;
	c->cut_at = 0;
}

int stack_copy_check(struct stack_copy *c, struct perf_events *pe, uint64_t wanted, int prog_fd)
{
	uint32_t more = stack_copy_wants(c, wanted);

	if (!more || !pe)
		return 0;
	if (perf_events_grow_stack(pe, more, prog_fd) < 0) {
		c->grows = 0; /* the events it has go on */
		return 0;
	}
	stack_copy_grown(c, more);
	return 1;
}

void stack_copy_seen(struct stack_copy *c, uint64_t asked, int cut)
{
	cut = cut != 0;
	/* A record of the events before the copy last grew, read after,
	 * asked for no more than the copy was: it counts for the copy it
	 * had. (The kernel may copy less than asked, so that a record
	 * fits in 64 KiB: 65528 bytes asked are fewer given.) */
	c->samples++;
	c->cut += cut;
	if (asked <= c->was)
		return;
	c->samples_at++;
	c->cut_at += cut;
}

int stack_copy_grew(const struct stack_copy *c, uint64_t *before, uint64_t *cut_before)
{
	*before = c->samples - c->samples_at;
	*cut_before = c->cut - c->cut_at;
	return c->now != c->first;
}
