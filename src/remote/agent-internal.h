/*
 * What the agent's two files share: agent.c (connections, requests,
 * scopes) and agent-run.c (a client's command: its directories, its
 * child, the relay of its output). Not for other layers.
 */
#ifndef RECCE_REMOTE_AGENT_INTERNAL_H
#define RECCE_REMOTE_AGENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent.pb-c.h"
#include "remote/agent.h"
#include "remote/frame.h"

/* Who is at the other end of a connection. */
struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int switch_user; /* run the command as uid/gid */
	char cert[256];	 /* over TLS: the client certificate's name */
};

/* agent.c: an Error frame for request id; a line of the audit log (why:
 * a refusal's reason, or NULL). */
int agent_send_error(int fd, uint64_t id, const char *msg);
void agent_audit(const char *path, const struct peer *p, const Recce__Agent__Run *run, int denied,
		 const char *why);

/* agent-run.c: the client's directory of kept files; its name for the
 * logs; runs a Run request, relaying its output to wfd until it ends. */
int agent_peer_files(const struct agent_config *cfg, const struct peer *p, char *dir, size_t len);
void agent_peer_name(const struct peer *p, char *buf, size_t len);
int agent_run_command(const struct agent_config *cfg, struct frame_conn *c, int wfd, uint64_t id,
		      const Recce__Agent__Run *run, const struct peer *p, unsigned scopes);

#endif
