/*
 * The pprof writer of `recce report --format pprof`: the profile again,
 * gzip-compressed, with only the samples a stack_set kept (after the pid,
 * tid and regex filters), so that `go tool pprof` and other pprof readers
 * see what the report showed. Locations, functions, mappings, comments and
 * every sample type stay as they were; the timeline, if any, keeps the
 * events of the kept samples.
 */
#ifndef RECCE_WRITER_PPROF_H
#define RECCE_WRITER_PPROF_H

#include <stdio.h>

#include "profile/profile.h"
#include "profile/stacks.h"

/* set must have been built from p. Returns 0, -ENOMEM, -EINVAL, or -EIO
 * when writing to out failed. */
int pprof_write_view(FILE *out, const struct profile *p, const struct stack_set *set);

#endif
