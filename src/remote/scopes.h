/*
 * What each client of the agent may do: five scopes, read (top, record,
 * report and the other commands that only look), trace (trace and
 * capture, and any option that puts probes into processes), patch (patch,
 * which changes their code), exec (a command that starts a program:
 * `record -- CMD`, `trace ... -- CMD`, which runs as the agent's user) and
 * admin (what changes state shared by every user: `events --clean`, a
 * port opened by `tasks --serve`). The command's name gives the first
 * scope (scope_needed()); the command itself, parsing its options with
 * its own table, asks for the rest (cli/grant.h), so that the scopes are
 * decided by what it will do, not by how its options are spelled. Grants
 * name a client by its certificate
 * ("cert:alice") or its local user ("uid:1000"), or every client of one
 * kind ("cert:*", "uid:*"); the exact name wins over the star. Without a
 * grant, a local client (the socket, or SSH's standard input and output)
 * has every scope, since its commands run as its own user and the kernel
 * decides what that user may touch; a client over TLS may read.
 *
 * Ownership: the caller owns struct scopes (scopes_release()).
 */
#ifndef RECCE_REMOTE_SCOPES_H
#define RECCE_REMOTE_SCOPES_H

#include <stddef.h>
#include <sys/types.h>

enum {
	SCOPE_READ = 1,
	SCOPE_TRACE = 2,
	SCOPE_PATCH = 4,
	SCOPE_EXEC = 8,
	SCOPE_ADMIN = 16,
	SCOPE_ALL = 31,
};

/* The variable the agent sets for a command it runs: "SCOPES FD WHO",
 * the client's scopes ("read,trace"), the descriptor where the command
 * writes a refusal of its own for the audit log (-1: none), and the
 * client as grants name it ("cert:bob"); see cli/grant.h. */
#define SCOPES_GRANT_ENV "RECCE_AGENT_GRANT"

struct scope_grant {
	char who[128]; /* "cert:NAME", "uid:N", "cert:*", "uid:*" */
	unsigned scopes;
};

struct scopes {
	struct scope_grant *v;
	size_t n, cap;
};

/* Adds a grant "WHO=SCOPE[,SCOPE...]", or "WHO=none" to deny WHO (a
 * later grant for the same client replaces the earlier one). Returns 0,
 * -EINVAL, or -ENOMEM. */
int scopes_add(struct scopes *s, const char *spec);

/* Adds the grants of a file, one "WHO=SCOPES" a line, blank lines and
 * lines starting with # left out. Returns 0, or -errno with *line the
 * line that did not parse (-EINVAL). */
int scopes_load(struct scopes *s, const char *path, int *line);

void scopes_release(struct scopes *s);

/* The scope a recce command needs by its name alone (read for record,
 * trace for trace, ...); 0 for a name the agent does not run. What its
 * options add is the command's own to ask for (cli/grant.h). */
unsigned scope_needed(const char *command);

/* The scopes of a mask "read,trace" names, or "none" (0: the client is
 * denied everything); -EINVAL for a name that is none of them. */
int scope_parse(const char *text, unsigned *mask);

/* The scopes of a client: cert its certificate's name ("" for a local
 * client), uid its user. */
unsigned scopes_of(const struct scopes *s, const char *cert, uid_t uid);

/* The words of a refusal, into buf: who has the scopes have, and what
 * (a command, an option) needs the scopes need; says which --allow would
 * grant them. The agent (by a command's name) and the command (by its
 * options, cli/grant.h) refuse in these same words. */
const char *scope_refusal(char *buf, size_t len, const char *who, unsigned have, const char *what,
			  unsigned need);

/* "read,trace" for a mask, into buf. */
const char *scope_names(unsigned mask, char *buf, size_t len);

#endif
