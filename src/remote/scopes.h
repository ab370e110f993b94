/*
 * What each client of the agent may do: three scopes, read (top, record,
 * report and the other commands that only look), trace (trace and
 * capture, which put probes into processes) and patch (patch, which
 * changes their code). Grants name a client by its certificate
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
	SCOPE_ALL = 7,
};

struct scope_grant {
	char who[128]; /* "cert:NAME", "uid:N", "cert:*", "uid:*" */
	unsigned scopes;
};

struct scopes {
	struct scope_grant *v;
	size_t n, cap;
};

/* Adds a grant "WHO=SCOPE[,SCOPE...]" (a later grant for the same client
 * replaces the earlier one). Returns 0, -EINVAL, or -ENOMEM. */
int scopes_add(struct scopes *s, const char *spec);

/* Adds the grants of a file, one "WHO=SCOPES" a line, blank lines and
 * lines starting with # left out. Returns 0, or -errno with *line the
 * line that did not parse (-EINVAL). */
int scopes_load(struct scopes *s, const char *path, int *line);

void scopes_release(struct scopes *s);

/* The scope a recce command needs, argv[0] its name and the rest its
 * arguments (tasks --libuv and record -e alloc put probes into a
 * process: trace); 0 for a name that is none of them. */
unsigned scope_needed(size_t argc, char *const *argv);

/* The scopes of a client: cert its certificate's name ("" for a local
 * client), uid its user. */
unsigned scopes_of(const struct scopes *s, const char *cert, uid_t uid);

/* "read,trace" for a mask, into buf. */
const char *scope_names(unsigned mask, char *buf, size_t len);

#endif
