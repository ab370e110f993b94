/*
 * Help pages: the text of docs/recce*.md compiled into the program (see
 * scripts/gen-help.sh), so `recce help CMD`, `recce CMD --help` and the
 * docs/ page are one text.
 */
#ifndef RECCE_HELP_H
#define RECCE_HELP_H

#include <stdio.h>

struct help_page {
	const char *name; /* subcommand, "" for the overview */
	const char *text;
};

extern const struct help_page help_pages[];

/* The page of a subcommand ("" for the overview), or NULL. */
const char *help_page(const char *name);

/* Prints the page to out; returns 0, or -1 if there is no such page. */
int help_show(const char *name, FILE *out);

#endif
