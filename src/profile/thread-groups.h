/*
 * The threads of a stack_set: entries grouped by their samples' pid and
 * tid labels, for the writers that draw one track per thread (speedscope,
 * Chrome traces). A set without tid labels is one group, tid -1. Samples
 * with a numeric "call" label (recce capture) are grouped by call as well,
 * and those groups come in call order.
 *
 * Ownership: thread_groups_build() fills a caller-allocated struct that
 * owns its arrays until thread_groups_release().
 */
#ifndef RECCE_THREAD_GROUPS_H
#define RECCE_THREAD_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/stacks.h"

struct thread_group {
	int64_t pid, tid; /* -1 when unknown */
	int64_t call;	  /* the "call" label, -1 when none */
	const char *name; /* the "thread" label, "" if none */
	int64_t value;	  /* sum of its entries' values */
};

struct thread_groups {
	struct thread_group *groups; /* busiest first */
	size_t n;
	size_t *of_entry; /* entry index -> group index */
};

/* Returns 0 or -ENOMEM. */
int thread_groups_build(struct thread_groups *g, const struct stack_set *set);
void thread_groups_release(struct thread_groups *g);

#endif
