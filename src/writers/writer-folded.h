/*
 * The folded-stacks writer: Brendan Gregg's format, one line per distinct
 * stack, "root;caller;...;leaf VALUE", which flamegraph.pl, inferno,
 * speedscope and many other tools read.
 *
 * Equal stacks are merged and lines are sorted by stack, so the output of
 * one profile is always the same bytes. Characters that would break the
 * format (';' and line breaks) in a frame name become '_'. A sample without
 * frames is written as the single frame "[unknown]", so the values of the
 * lines always add up to the set's total.
 */
#ifndef RECCE_WRITER_FOLDED_H
#define RECCE_WRITER_FOLDED_H

#include <stdio.h>

#include "profile/stacks.h"

/* Writes set to out. Returns 0, -ENOMEM, or -EIO if writing failed. */
int folded_write(FILE *out, const struct stack_set *set);

#endif
