/*
 * The flamegraph's call tree (see flame-tree.h): the stacks merged by a
 * radix sort, a frame at a time from the root.
 */
#include "writers/flame-tree.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/sat.h"

static const char *frame_name(const struct stack_frame *f)
{
	return f->name && f->name[0] ? f->name : "[unknown]";
}

/* Profiles intern their strings, so equal names are mostly equal pointers. */
static int compare_names(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a, b);
}

/* The frames' names, compared as frame_name() shows them. The pointer test
 * first spares reading the strings in the common case. */
static int compare_frames(const struct stack_frame *a, const struct stack_frame *b)
{
	return a->name == b->name ? 0 : compare_names(frame_name(a), frame_name(b));
}

static int compare_at_depth(const void *pa, const void *pb, void *depth)
{
	const struct stack_entry *a = *(const struct stack_entry *const *)pa;
	const struct stack_entry *b = *(const struct stack_entry *const *)pb;
	size_t d = *(const size_t *)depth;

	return compare_frames(&a->frames[d], &b->frames[d]);
}

/*
 * A group: the stacks order[lo..hi) that share their first depth + 1
 * frames; the last of those, frames[depth], is still to become a node under
 * parent. Its value and file:line are gathered when the group is found.
 */
struct group {
	size_t lo, hi, depth;
	uint32_t parent;
	int64_t value, base;
	const char *file; /* "" if unknown or not the same in every stack */
	int64_t line;	  /* 0 if unknown or not the same in every stack */
};

static void group_start(struct group *g, const struct stack_entry *e)
{
	const struct stack_frame *f = &e->frames[g->depth];

	g->value = 0;
	g->base = 0;
	g->file = f->file ? f->file : "";
	g->line = f->line;
}

static void group_add(struct group *g, const struct stack_entry *e)
{
	const struct stack_frame *f = &e->frames[g->depth];

	g->value = sat_add(g->value, e->value);
	g->base += e->base;
	if (g->line != f->line)
		g->line = 0;
	if (g->file[0] && compare_names(g->file, f->file ? f->file : "") != 0)
		g->file = "";
}

/*
 * Splits order[lo..hi), stacks that share their first d frames, into
 * groups by frame d and pushes them, last first, so that the first becomes
 * a node next and nodes come out depth first. Stacks that end at d stay in
 * front, in no group. Pending groups never overlap, so the stack needs room
 * for at most one group per stack of the set.
 *
 * Reading frame d of every stack is the cost here (the frames of different
 * stacks are far apart in memory), so the common case, all stacks going on
 * to the same frame, is found and summed in one pass.
 */
static void push_groups(const struct stack_entry **order, size_t lo, size_t hi, size_t d,
			uint32_t parent, struct group *stack, size_t *nstack)
{
	struct group g = {.lo = lo, .hi = hi, .depth = d, .parent = parent};
	size_t j;

	for (j = lo; j < hi; j++) {
		if (order[j]->nframes == d) {
			const struct stack_entry *e = order[j];

			order[j] = order[lo];
			order[lo++] = e;
		}
	}
	if (lo == hi)
		return;
	g.lo = lo;
	group_start(&g, order[lo]);
	for (j = lo; j < hi; j++) {
		if (compare_frames(&order[j]->frames[d], &order[lo]->frames[d]) != 0)
			break;
		group_add(&g, order[j]);
	}
	if (j == hi) {
		stack[(*nstack)++] = g;
		return;
	}

	qsort_r(order + lo, hi - lo, sizeof(*order), compare_at_depth, &d);
	for (size_t end = hi; end > lo; end = g.lo) {
		g.hi = end;
		group_start(&g, order[end - 1]);
		for (g.lo = end; g.lo > lo; g.lo--) {
			if (compare_frames(&order[g.lo - 1]->frames[d],
					   &order[end - 1]->frames[d]) != 0)
				break;
			group_add(&g, order[g.lo - 1]);
		}
		stack[(*nstack)++] = g;
	}
}

static int tree_add_node(struct flame_tree *t, const struct stack_frame *f, uint32_t parent)
{
	struct flame_node *n;

	/* Node ids are 32-bit. */
	struct flame_node *nodes =
	    t->n >= UINT32_MAX ? NULL : array_reserve(t->nodes, &t->cap, t->n + 1, sizeof(*nodes));

	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	n = &t->nodes[t->n++];
	memset(n, 0, sizeof(*n));
	n->name = f ? frame_name(f) : "all";
	n->file = f && f->file ? f->file : "";
	n->module = f && f->module ? f->module : "";
	n->line = f ? f->line : 0;
	n->parent = parent;
	n->depth = f ? t->nodes[parent].depth + 1 : 0;
	return 0;
}

int flame_tree_build(struct flame_tree *t, const struct stack_set *set, double min_fraction)
{
	const struct stack_entry **order = malloc((set->n ? set->n : 1) * sizeof(*order));
	struct group *stack = malloc((set->n ? set->n : 1) * sizeof(*stack));
	size_t m = 0, nstack = 0;
	int err = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (!order || !stack || tree_add_node(t, NULL, 0) < 0)
		goto out;
	for (size_t i = 0; i < set->n; i++) {
		if (set->entries[i].value <= 0 && set->entries[i].base <= 0)
			continue;
		order[m++] = &set->entries[i];
		t->nodes[0].value = sat_add(t->nodes[0].value,
					    set->entries[i].value > 0 ? set->entries[i].value : 0);
		t->nodes[0].base += set->entries[i].base > 0 ? set->entries[i].base : 0;
	}
	t->min_value = (int64_t)ceil(min_fraction * (double)t->nodes[0].value);
	if (t->min_value < 1)
		t->min_value = 1;

	push_groups(order, 0, m, 0, 0, stack, &nstack);
	while (nstack > 0) {
		struct group g = stack[--nstack];
		uint32_t id = (uint32_t)t->n;
		struct flame_node *n;

		if (g.value < t->min_value) {
			t->nodes[g.parent].next_x += g.value;
			continue;
		}
		if (tree_add_node(t, &order[g.lo]->frames[g.depth], g.parent) < 0)
			goto out;
		n = &t->nodes[id];
		n->value = g.value;
		n->base = g.base;
		n->file = g.file;
		n->line = g.line;
		/* Callees side by side from the caller's left edge, in name
		 * order; the caller's own time is to their right. */
		n->x = n->next_x = t->nodes[g.parent].next_x;
		t->nodes[g.parent].next_x += g.value;
		if (n->depth > t->max_depth)
			t->max_depth = n->depth;
		push_groups(order, g.lo, g.hi, g.depth + 1, id, stack, &nstack);
	}
	err = 0;
out:
	free(order);
	free(stack);
	return err;
}

void flame_tree_release(struct flame_tree *t)
{
	free(t->nodes);
}
