/*
 * Thread groups (see thread-groups.h): a hash map from (pid, tid) to a
 * group, then the groups sorted by value and the entries' group indexes
 * renumbered to match.
 */
#include "profile/thread-groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"
#include "util/sat.h"

static int group_cmp(const void *a, const void *b)
{
	const struct thread_group *x = a, *y = b;

	if (x->call >= 0 && y->call >= 0)
		return (x->call > y->call) - (x->call < y->call);
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int thread_groups_build(struct thread_groups *g, const struct stack_set *set)
{
	struct u64map index;
	size_t *order = NULL;
	int ret = -ENOMEM;

	memset(g, 0, sizeof(*g));
	u64map_init(&index);
	g->groups = calloc(set->n ? set->n : 1, sizeof(*g->groups));
	g->of_entry = calloc(set->n ? set->n : 1, sizeof(*g->of_entry));
	if (!g->groups || !g->of_entry)
		goto out;
	for (size_t i = 0; i < set->n; i++) {
		const struct stack_entry *e = &set->entries[i];
		int64_t pid = stacks_entry_num(e, "pid", -1), tid = stacks_entry_num(e, "tid", -1);
		int64_t call = stacks_entry_num(e, "call", -1);
		/* A call is of one thread: its number stands in for the pid. */
		uint64_t key = call >= 0 ? (uint64_t)1 << 63 | (uint64_t)(uint32_t)call << 32
					 : (uint64_t)(uint32_t)pid << 32;
		uint64_t at;

		key |= (uint32_t)tid;
		if (!u64map_get(&index, key, &at)) {
			const struct profile_label *l =
			    e->sample ? profile_sample_label(e->sample, "thread") : NULL;

			at = g->n++;
			g->groups[at] =
			    (struct thread_group){pid, tid, call, l && l->str ? l->str : "", 0};
			if (u64map_put(&index, key, at) < 0)
				goto out;
		}
		g->groups[at].value = sat_add(g->groups[at].value, e->value);
		g->of_entry[i] = (size_t)at;
	}
	/* Sort, remembering where each group went. */
	order = malloc((g->n ? g->n : 1) * sizeof(*order));
	struct thread_group *sorted = malloc((g->n ? g->n : 1) * sizeof(*sorted));
	if (!order || !sorted) {
		free(sorted);
		goto out;
	}
	memcpy(sorted, g->groups, g->n * sizeof(*sorted));
	qsort(sorted, g->n, sizeof(*sorted), group_cmp);
	for (size_t i = 0; i < g->n; i++)
		for (size_t j = 0; j < g->n; j++)
			if (g->groups[i].pid == sorted[j].pid &&
			    g->groups[i].tid == sorted[j].tid &&
			    g->groups[i].call == sorted[j].call)
				order[i] = j;
	for (size_t i = 0; i < set->n; i++)
		g->of_entry[i] = order[g->of_entry[i]];
	free(g->groups);
	g->groups = sorted;
	ret = 0;
out:
	free(order);
	u64map_release(&index);
	if (ret)
		thread_groups_release(g);
	return ret;
}

void thread_groups_release(struct thread_groups *g)
{
	free(g->groups);
	free(g->of_entry);
	memset(g, 0, sizeof(*g));
}
