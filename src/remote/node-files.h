/*
 * The files a client keeps on a node: what a command run by the agent
 * wrote and was asked to leave there (a trace's --wrap set, too big or
 * too long-lived to stream back), kept until the client fetches them.
 *
 * Each client has a directory of its own under the agent's files
 * directory: uid-N for a local or SSH client (owned by that user when the
 * agent runs as root), cert-NAME for a TLS client. Names are base names
 * only; a set NAME is NAME and its wrapped files NAME.0, NAME.1, ...
 *
 * Ownership: nothing is allocated for the caller.
 */
#ifndef RECCE_NODE_FILES_H
#define RECCE_NODE_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The client's directory under base (made 0700, and base too), in buf.
 * cert: the TLS client's certificate name, or "" for uid. chown_to:
 * give it to uid:gid (an agent running as root for another user).
 * Returns 0 or -errno. */
int node_files_dir(const char *base, const char *cert, uid_t uid, gid_t gid, int chown_to,
		   char *buf, size_t len);

/* Whether name is a file of the set want: want itself or want.N. */
int node_files_in_set(const char *name, const char *want);

/* Moves the files of the sets keep[0..n) from the directory from to dir,
 * replacing files of the same names: regular files of one name only,
 * never a link. Returns how many it moved. */
size_t node_files_keep(int from, const char *dir, char *const *keep, size_t n);

/* Sends the file name of dirfd as File chunks of request id on fd: a
 * regular file of one name only, never through a link. Returns 0 (also
 * when it is not there, or is not such a file) or -errno. */
int node_files_send(int fd, uint64_t id, int dirfd, const char *name);

/* Answers a Files request of id on fd for the client directory dir: the
 * list, or the files of the sets fetch[0..n) then an Exit (status 1 when
 * a set matched nothing, with a line on stream 2 saying which), each
 * removed once sent when remove. Returns 0 or -errno. */
int node_files_answer(int fd, uint64_t id, const char *dir, char *const *fetch, size_t n,
		      int remove);

#endif
