/*
 * Naming a profile after the fact: the locations of a profile recorded
 * with `recce record --no-symbolize` (or any pprof file whose locations
 * carry addresses in mappings with a build-id, but no lines) get
 * functions, files and lines from the binaries of those build-ids: the
 * file at the mapping's path when its build-id matches, else the table
 * the symbol cache kept (symbolizer_open_build_id()). A location that is
 * the caller in any sample is looked up one byte back, inside its call,
 * as record does. What cannot be found stays unnamed (reports show it as
 * MODULE+0xOFFSET) so that a later run, with the binary at hand, can
 * still name it.
 */
#ifndef RECCE_PROFILE_FILL_NAMES_H
#define RECCE_PROFILE_FILL_NAMES_H

#include <stddef.h>

struct profile;
struct symbolizer;

struct fill_stats {
	size_t unnamed;		   /* locations without lines in a mapping with a build-id */
	size_t named;		   /* of them, named now */
	size_t missing;		   /* mappings whose binary was found nowhere */
	char missing_example[512]; /* one of them: "FILE (build-id ID)" */
};

/* How many locations of p fill_names() would look up (0: nothing to do). */
size_t profile_unnamed_locations(const struct profile *p);

/* Names what it can; st gets the counts. Returns 0 or -ENOMEM. */
int profile_fill_names(struct profile *p, struct symbolizer *s, struct fill_stats *st);

#endif
