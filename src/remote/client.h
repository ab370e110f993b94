/*
 * The client side of the agent protocol: `recce --node NODE COMMAND ...`
 * runs COMMAND on the node's agent and prints what it prints there, as it
 * comes; the files it writes with -o arrive here, at the paths given.
 *
 * NODE is unix:PATH (or a path) for a local agent's socket, or
 * ssh://[USER@]HOST[:PORT] to start `recce agent --stdio` on HOST over the
 * user's own SSH, or HOST[:PORT] for an agent's --listen over TLS. When
 * the caller's interrupted flag is set (its Ctrl-C), the command on the
 * node is cancelled, and still writes its files.
 *
 * The client says nothing itself: the command's output, its progress,
 * the node's file list and every message go to the caller's callbacks
 * (struct remote_ui; cli/node.c writes them). How nodes are reached is
 * the caller's to say too (struct remote_config: cli/dirs.c reads it from
 * the environment).
 */
#ifndef RECCE_CLIENT_H
#define RECCE_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct remote_config {
	const char *tls_dir; /* the client's certificates for a TLS node (remote/tls.h) */
	const char *ssh;     /* the SSH client to run; NULL: "ssh" */
	const char *remote;  /* recce on an SSH node; NULL: "recce" */
};

/* What the client has to tell, beside the command's own output. */
enum remote_note {
	REMOTE_UNREACHABLE,  /* node cannot be reached: detail (a TLS error) or err */
	REMOTE_CERT_REFUSED, /* its agent refused this client's certificate: detail */
	REMOTE_NOT_AGENT,    /* the node did not answer as an agent: err */
	REMOTE_REFUSED,	     /* the agent refused: detail, its message */
	REMOTE_GONE,	     /* the agent went away before the command ended: err or 0 */
	REMOTE_CANNOT_WRITE, /* a file that came cannot be written here: detail, err */
	REMOTE_FETCHED,	     /* fetch: count files of bytes bytes written here */
	REMOTE_KEPT,	     /* the -o set detail of a --wrap trace stays on the node */
	REMOTE_NO_MEMORY,
	/* Several nodes (multi.h): */
	REMOTE_NO_CLOCK,     /* node's agent does not say its time */
	REMOTE_CLOCKS,	     /* detail: every node's clock against this one's */
	REMOTE_CANNOT_START, /* node's client could not be started: err */
	REMOTE_WAIT_FAILED,  /* the nodes' output could not be waited for: err */
	REMOTE_WROTE,	     /* an -o file came back to detail, of bytes bytes */
};

struct remote_note_info {
	enum remote_note what;
	const char *node;
	const char *detail; /* or NULL */
	int err;	    /* a negative errno, or 0 */
	uint64_t count, bytes;
};

/* One file the node keeps for the client. */
struct remote_file {
	const char *name;
	uint64_t size;
	int64_t mtime_ns;
};

struct remote_ui {
	/* The command's output as it comes, on stream 1 or 2. */
	void (*output)(void *arg, int stream, const void *data, size_t len);
	/* How far the command is: done of total (0: not known), in unit. */
	void (*progress)(void *arg, const char *node, const char *what, uint64_t done,
			 uint64_t total, const char *unit);
	/* `files`: the node's files for this client (n may be 0). */
	void (*files)(void *arg, const struct remote_file *files, size_t n);
	void (*note)(void *arg, const struct remote_note_info *note);
	void *arg;
	/* Set by the caller (its SIGINT handler): cancel the command. */
	const volatile sig_atomic_t *interrupted;
};

/* Tells ui (if it listens) what happened, at node (or NULL). */
void remote_tell(const struct remote_ui *ui, enum remote_note what, const char *node,
		 const char *detail, int err);

/* Runs argv[0..argc) (a subcommand and its arguments, checked by
 * remote_check_args()) on node and returns its exit status, or 1 when
 * the node cannot be reached or goes away (ui was told why). */
int remote_run(const struct remote_config *cfg, const struct remote_ui *ui, const char *node,
	       int argc, char **argv);

/* Whether node is one remote_run() can reach: unix:PATH or a path,
 * ssh://[USER@]HOST[:PORT], or HOST[:PORT] (no other "://"). */
int remote_node_valid(const char *node);

/* The node's clock against this one's: offset (its minus ours) and the
 * round trip it was measured over, from the time its agent puts in its
 * Hello. Returns 0, -ENOTSUP for an agent that sends none, or the
 * connection's -errno. */
int remote_clock(const struct remote_config *cfg, const char *node, int64_t *offset_ns,
		 int64_t *rtt_ns);

#endif
