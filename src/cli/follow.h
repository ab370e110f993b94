/*
 * The pace of the subcommands that follow running processes' event files
 * (`recce events -f`, `recce seq -f`): read, wait a tenth of a second,
 * read again, until Ctrl-C, a deadline, or every process is gone.
 */
#ifndef RECCE_CLI_FOLLOW_H
#define RECCE_CLI_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ring_reader;

/*
 * Waits up to 100 ms. Returns 1 to read again, 0 to stop: the stop
 * signal arrived on sfd, the CLOCK_MONOTONIC deadline (0: none) passed,
 * or every one of the n pidfds (-1 entries are ignored; none at all
 * means no process to wait for) reports its process gone.
 */
int follow_wait(int sfd, const int *pidfds, size_t n, uint64_t deadline);

/* The CLOCK_MONOTONIC deadline seconds from now; 0 (none) for 0. */
uint64_t follow_deadline(double seconds);

/*
 * Opens process pid's event file into r (ring_reader_open_pid()). A
 * process that uses librecce (maps librecce.so, or its executable defines
 * recce_event) but has written no event has no file yet: then says so
 * once and waits for it, for up to seconds (0: until Ctrl-C). Returns 0,
 * -ETIMEDOUT when none came in that time, -ESRCH when the process ended
 * first, or ring_reader_open_pid()'s error.
 */
int follow_open_events(struct ring_reader *r, pid_t pid, char *path, size_t len, double seconds);

#endif
