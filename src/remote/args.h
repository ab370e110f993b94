/*
 * The arguments a command takes to a node: its -o files, which come back
 * here (or stay there, for a trace's --wrap set), checked before it goes,
 * and made each node's own with "{node}" in their paths when one command
 * runs on several nodes.
 *
 * Ownership: remote_argv_for_node() returns a new vector whose changed
 * strings are its own; remote_argv_free() frees those and the vector.
 */
#ifndef RECCE_REMOTE_ARGS_H
#define RECCE_REMOTE_ARGS_H

#include <stddef.h>

/* What an -o path puts each node's name in, when several run a command. */
#define REMOTE_NODE_MARK "{node}"

/* Why argv cannot run on a node, or 0: REMOTE_ARGS_FILES for `files`
 * with arguments or `fetch` without names, REMOTE_ARGS_SAME_NAME for two
 * -o files of one base name. */
enum { REMOTE_ARGS_FILES = 1, REMOTE_ARGS_SAME_NAME };
int remote_check_args(int argc, char **argv);

/* Whether a command's arguments (up to "--") keep its -o files on the
 * node: a trace's --wrap set. */
int remote_keeps_outputs(int argc, char **argv);

/* The path of the -o FILE, -oFILE, --output FILE or --output=FILE at
 * argv[*i] (*i moved past a separate FILE), with *prefix the text before
 * it in the same argument ("", "-o", "--output="); NULL for none. */
const char *remote_output_arg(int argc, char **argv, int *i, const char **prefix);

/* The first -o path of argv that would come back here from every one of
 * several nodes to one path (it does not hold REMOTE_NODE_MARK; not "-",
 * not a --wrap set, which stays on each node), or NULL. */
const char *remote_outputs_collide(int argc, char **argv);

/* node as it goes into a file name for REMOTE_NODE_MARK: its host (and
 * port), user or socket path, every character other than a letter, a
 * digit, '.' or '-' made '_' ("db1:7070" gives "db1_7070"). */
void remote_node_label(const char *node, char *buf, size_t len);

/* s with every REMOTE_NODE_MARK put as node's label: a new string, or
 * NULL when out of memory. */
char *remote_node_path(const char *s, const char *node);

/* argv with REMOTE_NODE_MARK in each -o path put as node's label; NULL
 * when out of memory. */
char **remote_argv_for_node(const char *node, int argc, char **argv);
void remote_argv_free(int argc, char **v, char **argv);

#endif
