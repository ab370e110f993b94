/*
 * A view of a profile: the stacks of one sample type, filtered by
 * process, thread and frame, with their events in time order when the
 * writer needs them, and the same for two profiles being compared. The
 * one path from a read profile to what a writer draws, for `recce report`
 * and for every later reader of profiles (a page, a query).
 *
 * Ownership: the caller owns the profiles and the struct; the view owns
 * its stack sets and events until profile_view_release.
 */
#ifndef RECCE_PROFILE_VIEW_H
#define RECCE_PROFILE_VIEW_H

#include <stddef.h>

#include "profile/profile.h"
#include "profile/stacks.h"

/* Which step of building a view failed. */
enum profile_view_step {
	VIEW_OK,
	VIEW_NO_TYPE,	  /* the profile has no sample type of that name (-ENOENT) */
	VIEW_NO_TIMELINE, /* events were asked of a profile without a timeline (-ENODATA) */
	VIEW_STACKS,	  /* reading the stacks */
	VIEW_EVENTS,	  /* reading the timeline */
	VIEW_MISMATCH,	  /* diff: the before profile lacks the sample type (-EDOM) */
};

struct profile_view {
	size_t type; /* the sample type shown, an index in p->sample_types */
	struct stack_set set;
	struct stack_event *events; /* with timeline: in time order */
	size_t nevents;
	/* Only for a diff: */
	struct stack_set before, merged;
	enum profile_view_step failed;
};

/*
 * Builds the view of p's sample type named type (NULL: its default) under
 * filter (NULL: none), with events if timeline is set. Returns 0 or a
 * negative errno with v->failed saying where.
 */
int profile_view_build(const struct profile *p, const char *type, const struct stack_filter *filter,
		       int timeline, struct profile_view *v);

/* The same for a comparison: after's type, looked up by name and unit in
 * before, and the merged set of both. */
int profile_view_diff(const struct profile *before, const struct profile *after, const char *type,
		      const struct stack_filter *filter, struct profile_view *v);

void profile_view_release(struct profile_view *v);

/* The names of p's sample types, ", "-separated, into buf: for messages. */
void profile_view_types(const struct profile *p, char *buf, size_t size);

#endif
