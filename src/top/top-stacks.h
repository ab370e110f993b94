/*
 * The stacks of one row of `recce top`, named and merged: raw stacks that
 * differ only in addresses within the same lines (a Go goroutine's stack
 * sampled at several instructions of one line, say) become one stack with
 * the samples of all, so the stack view and its flamegraph show each
 * stack once, with its whole share.
 *
 * Ownership: the caller owns the struct (init/release); frames point into
 * the sampler's and symbolizer's names, valid while the sampler lives.
 */
#ifndef RECCE_TOP_STACKS_H
#define RECCE_TOP_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "top/top-model.h"
#include "top/top-sample.h"
#include "util/htab.h"

struct top_named_stack {
	uint64_t count;
	size_t first, nframes; /* in frames[], leaf first */
};

struct top_named_stacks {
	struct top_named_stack *v; /* most samples first */
	size_t n, cap;
	struct top_frame *frames;
	size_t nframes, frames_cap;
	uint64_t total; /* the row's samples */
	struct htab index;
};

void top_named_stacks_init(struct top_named_stacks *ns);
void top_named_stacks_release(struct top_named_stacks *ns);

/*
 * Fills ns (emptied first) with the stacks of row (pid, tid) over the last
 * nintervals intervals, each named with at most max_frames frames and
 * merged with those naming the same (function, file, line) sequence.
 * Returns the number of stacks or -ENOMEM.
 */
ssize_t top_named_stacks_build(struct top_named_stacks *ns, struct top_sampler *s,
			       struct top_model *m, pid_t pid, pid_t tid, unsigned nintervals,
			       size_t max_frames);

#endif
