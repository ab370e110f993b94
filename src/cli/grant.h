/*
 * What the agent lets the client behind this command do. When `recce
 * agent` runs a command for a client it says, in the environment, which
 * scopes (remote/scopes.h) the client has; the command, as it parses its
 * own options with its own table (cli/options.h), asks here for each
 * scope what it was told to do needs (a program to start: exec; probes:
 * trace; shared state removed: admin) and for each file it would write
 * to be a plain name in its private directory. What is not granted ends
 * the command before it does anything, with a message that says which
 * grant would allow it, and a line the agent writes to its audit log.
 *
 * Outside the agent every call here is a no-op: a user's own commands
 * are limited by the kernel, not by recce.
 */
#ifndef RECCE_CLI_GRANT_H
#define RECCE_CLI_GRANT_H

/* Reads the grant of the environment (SCOPES_GRANT_ENV, remote/scopes.h) (and takes it out, so that
 * a program the command starts does not see it). A grant that does not parse grants nothing. Called
 * once, first, by main. */
void grant_init(void);

/* Ends the command (exit 1) unless the client has scope; what says what
 * needs it ("record -- CMD", "events --clean"). */
void grant_need(unsigned scope, const char *what);

/* Ends the command (exit 1) unless path, a file it would write for the
 * option what, is "-" or a plain name (no '/', not "." or ".."): it is
 * written in the command's private directory and the client brings it
 * back. */
void grant_output(const char *path, const char *what);

#endif
