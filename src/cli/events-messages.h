/*
 * The words of `recce events` and `recce seq` about librecce event files:
 * what to do when one cannot be opened (both say it alike), and what
 * `recce events` says after the events (the programs before and after an
 * exec, what was shown and what was lost).
 */
#ifndef RECCE_CLI_EVENTS_MESSAGES_H
#define RECCE_CLI_EVENTS_MESSAGES_H

#include <stddef.h>
#include <sys/types.h>

#include "events/ring-read.h"

/* Dies with what to do about err from opening the event file of pid (when
 * not 0) or at what. */
__attribute__((noreturn)) void events_die_open(int err, const char *what, pid_t pid);

/* A name of the target's (its command, a thread's), at most 16 bytes,
 * escaped into buf: a newline in it must not start a line of ours. */
const char *events_shown_name(const char *name, char *buf, size_t len);

/* Where the events of the programs the process ran before and after the
 * file at path are: an exec starts a new file under the same name, and
 * the earlier one is set aside (its name in the new one's header). */
void events_say_exec(const struct ring_reader *r, const char *path);

/* How many events were shown, of how many threads, and every loss. */
void events_summary(const struct ring_reader *r, size_t shown);

#endif
