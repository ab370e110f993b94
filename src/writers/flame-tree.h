/*
 * The merged call tree a flamegraph draws: one node per distinct call
 * path, already placed (x, depth) and in the order the writer and the
 * viewer walk it.
 */
#ifndef RECCE_FLAME_TREE_H
#define RECCE_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/stacks.h"

struct flame_node {
	const char *name;
	const char *file;   /* "" if unknown or different between merged frames */
	const char *module; /* of the first frame merged here */
	int64_t line;	    /* 0 if unknown or different between merged frames */
	int64_t value;	    /* this frame and everything it called */
	int64_t base;	    /* the same in the base profile of a diff */
	int64_t x;	    /* value to its left, in the graph */
	int64_t next_x;	    /* where its next callee goes */
	uint32_t parent;
	uint32_t depth; /* the root is 0 */
};

/*
 * The call tree, nodes in depth-first order (root first, callees in name
 * order), which is the order the writer and the script walk. It is built a
 * level at a time, by sorting each group of stacks that share a prefix on
 * their next frame (a radix sort of the stacks, most significant frame
 * first), so each frame is compared a few times rather than once per
 * comparison of whole stacks.
 */
struct flame_tree {
	struct flame_node *nodes; /* nodes[0] is the root, "all" */
	size_t n, cap;
	int64_t min_value; /* narrower frames are not made into nodes */
	uint32_t max_depth;
};

/*
 * Builds the tree of the frames at least min_fraction of the total wide.
 * Narrower ones are never made into nodes, which spares the memory of the
 * long tails of rare stacks, but their value counts in their caller and
 * they keep their place in it (x advances past them).
 */
int flame_tree_build(struct flame_tree *t, const struct stack_set *set, double min_fraction);
void flame_tree_release(struct flame_tree *t);

#endif
