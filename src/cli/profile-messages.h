/*
 * The messages of reading a profile file and building a view of it, for
 * every subcommand that reads profiles (report, and the page and query of
 * continuous profiling to come): one wording for one failure everywhere.
 */
#ifndef RECCE_CLI_PROFILE_MESSAGES_H
#define RECCE_CLI_PROFILE_MESSAGES_H

#include "profile/profile.h"
#include "profile/view.h"

#define PROFILE_DEFAULT_FILE "recce.pb.gz" /* what `recce record` writes */

/* Reads the profile at path, or prints why not and returns NULL. */
struct profile *profile_read_or_say(const char *path);

/* Writes p to path. A disk that is full or failing does not lose it: it
 * is kept in a new directory elsewhere (pprof_write_file_or_elsewhere(),
 * its path into where[cap]), and an error says so. Dies when it can be
 * written nowhere. Returns the path written: path, or where. */
const char *profile_write_or_say(const struct profile *p, const char *path, char *where,
				 size_t cap);

/* Warns, once a run, when a debuginfod server stalled into its timeout
 * and recce stopped asking (symbolizer_debuginfod_stalled()). */
void debuginfod_say_stalled(void);

/*
 * Names the locations of p (read from path) that were recorded without
 * names (profile/fill-names.h), through the symbol cache; warns about
 * binaries found nowhere. Returns how many locations got names, or -1
 * when memory ran out (said).
 */
long profile_fill_names_or_say(struct profile *p, const char *path);

/*
 * Prints why a view of p (read from path; the after side of a diff whose
 * before is before_path, or NULL) failed with err. An unknown sample type
 * (value) is a usage error of subcommand cmd and exits 2; otherwise returns RECCE_EXIT_ERROR.
 */
int profile_view_say_failed(const char *cmd, const struct profile *p, const struct profile_view *v,
			    int err, const char *path, const char *value, const char *before_path);

#endif
