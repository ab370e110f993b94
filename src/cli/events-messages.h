/*
 * The words for librecce event files that `recce events` and `recce seq`
 * both say, so that they say them alike.
 */
#ifndef RECCE_CLI_EVENTS_MESSAGES_H
#define RECCE_CLI_EVENTS_MESSAGES_H

#include <sys/types.h>

/* Dies with what to do about err from opening the event file of pid (when
 * not 0) or at what. */
__attribute__((noreturn)) void events_die_open(int err, const char *what, pid_t pid);

#endif
