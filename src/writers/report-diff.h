/*
 * Comparing two profiles: a stack_set that holds both (for the
 * differential flamegraph) and a text table of the functions whose share
 * of the samples changed most.
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
 * Fills out with the entries of after (value as is, base 0) followed by
 * those of before (value 0, base = their value). The frames are borrowed
 * from both sets, which must outlive out; out's total is after's. Release
 * out with stacks_release(). Returns 0 or -ENOMEM.
 */
int stacks_diff_merge(const struct stack_set *before, const struct stack_set *after,
		      struct stack_set *out);

/*
 * Writes the table: the top (0: all) functions by the change of their self
 * share, largest first, gains and losses alike, with their self shares in
 * both profiles and the change of their total share. Returns 0, -ENOMEM or
 * -EIO.
 */
int report_diff_write(FILE *out, const struct stack_set *before, const struct stack_set *after,
		      size_t top, const char *before_name, const char *after_name);

#endif
