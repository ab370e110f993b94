/*
 * The signals that stop a recording or a trace (SIGINT, SIGTERM, SIGHUP),
 * turned into a readable descriptor, so that the subcommand's poll loop
 * sees the first one, stops cleanly and still writes what it collected.
 * Program side only (it changes the process's signal mask).
 */
#ifndef RECCE_SIGNALS_H
#define RECCE_SIGNALS_H

#include <signal.h>

/* Blocks the stop signals, saving the previous mask in *old, and returns a
 * non-blocking signalfd that reads them, or -1. */
int block_stop_signals(sigset_t *old);

/* After the work, a second Ctrl-C ends recce at once: drains and closes
 * sfd (if >= 0), consuming the signal that stopped the work, and restores
 * the mask old. */
void unblock_stop_signals(int sfd, const sigset_t *old);

#endif
