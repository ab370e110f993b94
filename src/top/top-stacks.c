/*
 * Named, merged stacks of a top row (see top-stacks.h): each raw stack is
 * named into the frame pool, then looked up by the hash of its names; a
 * stack named before gets the samples and its frames are dropped again.
 */
#include "top/top-stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/hash.h"

void top_named_stacks_init(struct top_named_stacks *ns)
{
	memset(ns, 0, sizeof(*ns));
	htab_init(&ns->index);
}

void top_named_stacks_release(struct top_named_stacks *ns)
{
	free(ns->v);
	free(ns->frames);
	htab_release(&ns->index);
	top_named_stacks_init(ns);
}

static int same_frame(const struct top_frame *a, const struct top_frame *b)
{
	return strcmp(a->function, b->function) == 0 && a->line == b->line &&
	       a->kernel == b->kernel &&
	       (a->file == b->file || (a->file && b->file && strcmp(a->file, b->file) == 0));
}

/* The stack being looked up: frames at first, nframes of them. */
struct wanted {
	const struct top_named_stacks *ns;
	size_t first, nframes;
};

static int same_stack(const void *ctx, uint64_t index)
{
	const struct wanted *w = ctx;
	const struct top_named_stack *s = &w->ns->v[index];

	if (s->nframes != w->nframes)
		return 0;
	for (size_t i = 0; i < s->nframes; i++)
		if (!same_frame(&w->ns->frames[s->first + i], &w->ns->frames[w->first + i]))
			return 0;
	return 1;
}

static uint64_t stack_hash(const struct top_frame *f, size_t n)
{
	uint64_t h = HASH_FNV1A_INIT;

	for (size_t i = 0; i < n; i++) {
		h = hash_fnv1a_value(hash_fnv1a_str(h, f[i].function), (uint64_t)f[i].line);
		h = hash_fnv1a_str(hash_fnv1a_value(h, 0), f[i].file ? f[i].file : "");
	}
	return h;
}

static int by_count(const void *a, const void *b)
{
	const struct top_named_stack *x = a, *y = b;

	return x->count != y->count ? (x->count > y->count ? -1 : 1)
				    : (x->first > y->first) - (x->first < y->first);
}

ssize_t top_named_stacks_build(struct top_named_stacks *ns, struct top_sampler *s,
			       struct top_model *m, pid_t pid, pid_t tid, unsigned nintervals,
			       size_t max_frames)
{
	const struct top_stack *raw;
	ssize_t n = top_model_stacks(m, pid, tid, nintervals, &raw, &ns->total);

	ns->n = ns->nframes = 0;
	htab_release(&ns->index);
	if (n < 0)
		return n;
	for (ssize_t i = 0; i < n; i++) {
		struct top_frame *f = array_reserve(ns->frames, &ns->frames_cap,
						    ns->nframes + max_frames, sizeof(*f));
		if (!f)
			return -ENOMEM;
		ns->frames = f;
		size_t nf = top_sampler_name_stack(s, raw[i].pid, raw[i].frames, raw[i].nframes,
						   f + ns->nframes, max_frames);
		struct wanted w = {ns, ns->nframes, nf};
		uint64_t h = stack_hash(f + ns->nframes, nf);
		struct htab_slot *hit = htab_find(&ns->index, h, same_stack, &w);
		if (hit) {
			ns->v[hit->val].count += raw[i].count;
			continue; /* its frames are written over by the next */
		}
		struct top_named_stack *v = array_reserve(ns->v, &ns->cap, ns->n + 1, sizeof(*v));
		if (!v || !htab_add(&ns->index, h, ns->n))
			return -ENOMEM;
		ns->v = v;
		ns->v[ns->n++] = (struct top_named_stack){raw[i].count, ns->nframes, nf};
		ns->nframes += nf;
	}
	qsort(ns->v, ns->n, sizeof(*ns->v), by_count);
	return (ssize_t)ns->n;
}
