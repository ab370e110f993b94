/*
 * The client side of the agent protocol: `recce --node NODE COMMAND ...`
 * runs COMMAND on the node's agent and prints what it prints there, as it
 * comes; the files it writes with -o arrive here, at the paths given.
 *
 * NODE is unix:PATH (or a path) for a local agent's socket, or
 * ssh://[USER@]HOST[:PORT] to start `recce agent --stdio` on HOST over the
 * user's own SSH, or HOST[:PORT] for an agent's --listen over TLS. Ctrl-C
 * stops the command on the node, which still writes its files; a second
 * one leaves at once.
 *
 * How nodes are reached is the caller's to say (struct remote_config:
 * cli/dirs.c reads it from the environment).
 */
#ifndef RECCE_CLIENT_H
#define RECCE_CLIENT_H

#include <stdint.h>

struct remote_config {
	const char *tls_dir; /* the client's certificates for a TLS node (remote/tls.h) */
	const char *ssh;     /* the SSH client to run; NULL: "ssh" */
	const char *remote;  /* recce on an SSH node; NULL: "recce" */
	/* Progress lines: -1 as the terminal says (redrawn on one, none
	 * otherwise), 0 never, 1 redrawn on a terminal and as lines
	 * otherwise. */
	int progress;
};

/* Runs argv[0..argc) (a subcommand and its arguments) on node and returns
 * its exit status, or 1 with a message when the node cannot be reached or
 * goes away, 2 for a node that is not one. */
int remote_run(const struct remote_config *cfg, const char *node, int argc, char **argv);

/* Whether a command's arguments (up to "--") keep its -o files on the
 * node: a trace's --wrap set. */
int remote_keeps_outputs(int argc, char **argv);

/* The path of the -o FILE, -oFILE, --output FILE or --output=FILE at
 * argv[*i] (*i moved past a separate FILE), with *prefix the text before
 * it in the same argument ("", "-o", "--output="); NULL for none. */
const char *remote_output_arg(int argc, char **argv, int *i, const char **prefix);

/* The node's clock against this one's: offset (its minus ours) and the
 * round trip it was measured over, from the time its agent puts in its
 * Hello. Returns 0, -ENOTSUP for an agent that sends none, or the
 * connection's -errno. */
int remote_clock(const struct remote_config *cfg, const char *node, int64_t *offset_ns,
		 int64_t *rtt_ns);

#endif
