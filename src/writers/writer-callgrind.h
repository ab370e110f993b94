/*
 * The callgrind writer: a stack_set as a callgrind profile (Valgrind's
 * "Callgrind Format Specification"), which KCachegrind, QCachegrind and
 * callgrind_annotate read.
 *
 * Every sample type of the profile is an event (for recce's profiles:
 * samples, and cpu in nanoseconds). Positions are source lines. A function
 * is a (name, source file) pair; its cost lines give its self cost per
 * source line (a sample's leaf frame), and its calls ("cfl=", "cfn=",
 * "calls=") give, per call site line and callee, the inclusive cost of the
 * samples that went through that call, counted once per sample however
 * often recursion repeats the call; "calls=" counts those samples (a
 * sampling profiler sees no calls, only samples). A function without a
 * source file is put in its module's name ("[kernel.kallsyms]"), or "???".
 * File and function names are compressed: "(N) name" the first time, "(N)"
 * after.
 */
#ifndef RECCE_WRITER_CALLGRIND_H
#define RECCE_WRITER_CALLGRIND_H

#include <stdio.h>

#include "profile/profile.h"
#include "profile/stacks.h"

/*
 * types/ntypes: the profile's sample types, which are the events; each
 * entry's costs are its sample's values. cmd is written as the "cmd:" line
 * (NULL for none). Returns 0, -ENOMEM, or -EIO when writing to out failed.
 */
int callgrind_write(FILE *out, const struct stack_set *set, const struct profile_value_type *types,
		    size_t ntypes, const char *cmd);

#endif
