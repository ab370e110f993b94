/*
 * The text report: ranks functions (or source lines) of a stack_set by
 * self value and writes them as a table, under a header made of the
 * profile's comments and the total.
 *
 * Self and total: a sample's value is the self value of its leaf frame and
 * counts in the total of every function (or line) on its stack, but only
 * once per sample, however often recursion repeats it there. So total never
 * exceeds the set's total and a recursive function is not counted twice.
 *
 * Rows are keyed by function name and source file (so two static functions
 * of one name in different files stay apart), and for lines also by line.
 */
#ifndef RECCE_REPORT_TEXT_H
#define RECCE_REPORT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "profile/stacks.h"

struct report_row {
	const char *name;   /* function; borrowed from the set */
	const char *file;   /* "" if unknown */
	int64_t line;	    /* the ranked line, or for functions the hottest one; 0 if unknown */
	const char *module; /* the frame's module, shown when file is unknown */
	int64_t self, total;
};

/*
 * Ranks set: functions, or source lines when lines is non-zero. For a
 * function, line is its hottest line: the one with the most self value, or
 * the most total value when it has no self value (a caller: the line of
 * its hottest call). Rows are sorted by self, then total, descending.
 * Returns 0 and a heap array the caller frees with free(), or -ENOMEM.
 */
int report_rank(const struct stack_set *set, int lines, struct report_row **rows, size_t *nrows);

struct report_text_opts {
	size_t top;		     /* rows shown, 0 for all */
	int lines;		     /* rank source lines instead of functions */
	const char *const *comments; /* header lines, such as the profile's comments */
	size_t ncomments;
};

/*
 * Writes the header and the table to out. Returns 0, -ENOMEM, or -EIO if
 * writing to out failed.
 */
int report_text_write(FILE *out, const struct stack_set *set, const struct report_text_opts *opts);

/* A row's "file:line", "file", module, or "" when nothing is known; returns
 * buf. */
const char *report_row_location(const struct report_row *r, char *buf, size_t size);

/* Formats a value of the given unit for people ("1234", "1.50s"); returns
 * buf. */
const char *report_value_format(char *buf, size_t size, int64_t value, const char *unit);

#endif
