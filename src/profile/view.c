/*
 * Views of profiles (see view.h): which sample type, which stacks, which
 * events, and the two sides of a comparison.
 */
#include "profile/view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct profile_view *v, enum profile_view_step step, int err)
{
	v->failed = step;
	return err;
}

/* Empties v and sets v->type to p's sample type named type (NULL: the
 * default). Returns 0, or -ENOENT when p has no such type. */
static int choose_type(const struct profile *p, const char *type, struct profile_view *v)
{
	int i = type ? profile_sample_type_index(p, type) : (int)p->default_sample_type;

	memset(v, 0, sizeof(*v));
	if (i < 0)
		return fail(v, VIEW_NO_TYPE, -ENOENT);
	v->type = (size_t)i;
	return 0;
}

/* filter, with a root frame per process when p is a recording of every
 * process (record -a, --cgroup: "target: every process ..."), and per
 * host when it was merged from several nodes ("nodes: ..."). */
static struct stack_filter with_roots(const struct profile *p, const struct stack_filter *filter)
{
	struct stack_filter f = filter ? *filter : (struct stack_filter){0};
	const char *target = profile_comment(p, "target");

	if (target && strncmp(target, "every process", 13) == 0)
		f.process_roots = 1;
	if (profile_comment(p, "nodes"))
		f.host_roots = 1;
	return f;
}

int profile_view_build(const struct profile *p, const char *type, const struct stack_filter *filter,
		       int timeline, struct profile_view *v)
{
	int err = choose_type(p, type, v);

	if (err)
		return err;
	if (timeline && !p->timeline)
		return fail(v, VIEW_NO_TIMELINE, -ENODATA);
	struct stack_filter f = with_roots(p, filter);
	err = stacks_from_profile(p, v->type, &f, &v->set);
	if (err)
		return fail(v, VIEW_STACKS, err);
	if (timeline) {
		err = stacks_timeline(&v->set, p, &v->events, &v->nevents);
		if (err)
			return fail(v, VIEW_EVENTS, err);
	}
	return 0;
}

int profile_view_diff(const struct profile *before, const struct profile *after, const char *type,
		      const struct stack_filter *filter, struct profile_view *v)
{
	int err = choose_type(after, type, v);

	if (err)
		return err;
	const struct profile_value_type *t = &after->sample_types[v->type];
	int ib = profile_sample_type_index(before, t->type);
	if (ib < 0 || strcmp(before->sample_types[ib].unit, t->unit) != 0)
		return fail(v, VIEW_MISMATCH, -EDOM);
	/* Roots when either is of every process, so that both line up. */
	struct stack_filter fb = with_roots(before, filter), fa = with_roots(after, filter);
	fb.process_roots = fa.process_roots = fb.process_roots || fa.process_roots;
	fb.host_roots = fa.host_roots = fb.host_roots || fa.host_roots;
	err = stacks_from_profile(before, (size_t)ib, &fb, &v->before);
	if (!err)
		err = stacks_from_profile(after, v->type, &fa, &v->set);
	if (!err)
		err = stacks_diff_merge(&v->before, &v->set, &v->merged);
	return err ? fail(v, VIEW_STACKS, err) : 0;
}

void profile_view_release(struct profile_view *v)
{
	free(v->events);
	stacks_release(&v->set);
	stacks_release(&v->before);
	stacks_release(&v->merged);
	v->events = NULL;
	v->nevents = 0;
}

void profile_view_types(const struct profile *p, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t t = 0; t < p->nsample_types && len < size; t++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", t ? ", " : "",
					p->sample_types[t].type);
}
