/*
 * recce agent's engine: serves the agent protocol (remote/frame.h) on a
 * local socket or on standard input and output (under SSH).
 *
 * Each connection is served by a process of its own, so that nothing one
 * client sends can reach another. It exchanges Hello, takes one Files
 * request (the client's kept files, remote/node-files.h) or one Run,
 * writes it to the audit log, and runs that recce command as a child in a
 * private directory: as the client's user when the agent is root and the
 * client is not (SO_PEERCRED), so that the kernel grants the command what
 * it would grant the client. With --listen, TCP connections are served
 * too, over TLS 1.3 with certificates on both sides (remote/tls.h): the
 * handshake checks the client's certificate before one byte of the
 * protocol is read, and a client refused is only a line on the agent's
 * standard error. The command's output streams back as it
 * comes, held for a client that reads slowly up to a limit past which
 * lines are dropped and counted (remote/outq.h), so that nothing waits on
 * that client; when it ends, the files the client asked for follow, then
 * its exit status. A Cancel, or a client that goes away, stops the command as
 * Ctrl-C would (SIGINT, SIGKILL 2 s later): its probes and events go with
 * it, whatever the client did. A command outside the client's scopes
 * (remote/scopes.h) is refused, and written to the audit log as denied.
 */
#ifndef RECCE_AGENT_H
#define RECCE_AGENT_H

/* Connections served at once. A connection that has not made its request
 * within 10 s of its accept (TLS handshake and Hello included) is
 * closed; at the cap, the oldest of those is closed for a new one, and
 * when every connection has made its request, the new one is refused. */
#define AGENT_MAX_CONNECTIONS 64

#include <sys/types.h>

#include "remote/scopes.h"

struct evloop;

struct agent_config {
	const char *socket;	     /* the local socket's path, or NULL with stdio */
	const char *listen;	     /* also TCP with TLS on [ADDR:]PORT, or NULL */
	const char *tls;	     /* the TLS directory of --listen (remote/tls.h) */
	int stdio;		     /* serve one connection on fds 0 and 1 */
	const char *audit;	     /* the audit log, appended; NULL for none */
	const char *self;	     /* the recce binary to run commands with */
	int stop_fd;		     /* stop serving when readable (a signalfd); -1 for none */
	const struct scopes *scopes; /* what each client may do (remote/scopes.h) */
	const char *files;	     /* where clients' kept files go (remote/node-files.h) */
	size_t client_buffer; /* a command's output held for a slow client (remote/outq.h); 0:
				 default */
	/* The caller's own sources in the agent's loop (the continuous
	 * profiler's keeper), added once the sockets are made: 0 or -errno.
	 * NULL: none. The loop reaps only the agent's own connections. */
	int (*attach)(void *arg, struct evloop *loop);
	void *attach_arg;
};

/* Serves until stop_fd is readable (socket) or the connection ends
 * (stdio). Returns 0, or -errno when the socket cannot be made (then
 * *what says which step failed). */
int agent_serve(const struct agent_config *cfg, const char **what);

#endif
