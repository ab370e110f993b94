/*
 * One profile view, written in the format a person asked for: the table
 * of `recce report` (by function or by line), folded stacks, flamegraph
 * SVG, pprof, callgrind, speedscope or Chrome trace; and the comparison of
 * two profiles (a table or a differential flamegraph). Every subcommand
 * that shows a profile picks its writer here.
 */
#ifndef RECCE_RENDER_H
#define RECCE_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"
#include "profile/stacks.h"

enum render_format {
	RENDER_TEXT,
	RENDER_LINES, /* the text table by source line */
	RENDER_FOLDED,
	RENDER_SVG,
	RENDER_PPROF,
	RENDER_CALLGRIND,
	RENDER_SPEEDSCOPE,
	RENDER_CHROME,
};

/* The names --format takes, for messages. */
#define RENDER_FORMAT_NAMES "text, folded, pprof, callgrind, speedscope, chrome, svg"

/* The format called name; 0, or -EINVAL for a name it does not know. */
int render_format_parse(const char *name, enum render_format *out);

/* Whether a format needs the profile's sample timeline (chrome), or draws
 * on it when there is one (speedscope). */
int render_needs_timeline(enum render_format f);
int render_uses_timeline(enum render_format f);

struct render_view {
	enum render_format format;
	const struct profile *p;
	const struct stack_set *set; /* the stacks to show; after, in a diff */
	const struct stack_event *events; /* the timeline, or NULL */
	size_t nevents;
	const char *name; /* the profile's file, for titles */
	size_t top;	  /* rows of a table; 0: all */
	const char *title; /* a flamegraph's title, or NULL */
	int icicle;

	/* A comparison (render_diff_write): the profile before, its file,
	 * and the stacks of both merged (for the flamegraph). */
	const struct stack_set *before, *merged;
	const char *before_name;
};

/* Writes v->set in v->format. Returns 0 or -errno. Takes a const void *
 * so that it can go to outfile_write() as it is. */
int render_write(FILE *out, const void *view);

/* Writes the comparison of v->before with v->set: a table, or with
 * RENDER_SVG a differential flamegraph of v->merged. */
int render_diff_write(FILE *out, const void *view);

#endif
