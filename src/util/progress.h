/*
 * How far a long operation has got, for the client of an agent.
 *
 * A command the agent runs gets a pipe named by RECCE_PROGRESS_FD in its
 * environment; progress_init() takes it, progress() writes a line there ("WHAT\tDONE\tTOTAL\tUNIT"),
 * which the agent sends its client as a Progress message. Elsewhere, and
 * more often than twice a second, progress() does nothing: a local
 * command's output is left as it is.
 */
#ifndef RECCE_UTIL_PROGRESS_H
#define RECCE_UTIL_PROGRESS_H

#include <stdint.h>

#define PROGRESS_ENV "RECCE_PROGRESS_FD"

/* Takes the pipe named in the environment, if any, and keeps it from
 * the programs recce starts (the variable is removed, the fd closed on
 * exec). Called once, first thing. */
void progress_init(void);

/* WHAT (a few words: "recording", "reading the store") has DONE of TOTAL
 * (0: not known) UNITs ("s", "bytes", "windows"). The last of an
 * operation (done == total) always goes. */
void progress(const char *what, uint64_t done, uint64_t total, const char *unit);

/* Parses one line progress() wrote (without its newline) into its parts;
 * what and unit point into line, which is changed. Returns 0, or -EINVAL
 * for a line that is not one. */
int progress_parse(char *line, const char **what, uint64_t *done, uint64_t *total,
		   const char **unit);

#endif
