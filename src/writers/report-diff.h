/*
 * Comparing two profiles: a text table of the functions whose share of
 * the samples changed most (the differential flamegraph draws the merged
 * set of stacks.h's stacks_diff_merge()).
 *
 * Shares, not raw values, are compared: a function's share is its value
 * over its profile's total, so a longer recording of the same program
 * shows no change.
 */
#ifndef RECCE_REPORT_DIFF_H
#define RECCE_REPORT_DIFF_H

#include <stdio.h>

#include "profile/stacks.h"

/*
 * Writes the table: the top (0: all) functions by the change of their self
 * share, largest first, gains and losses alike, with their self shares in
 * both profiles and the change of their total share. Returns 0, -ENOMEM or
 * -EIO.
 */
int report_diff_write(FILE *out, const struct stack_set *before, const struct stack_set *after,
		      size_t top, const char *before_name, const char *after_name);

#endif
