/*
 * `recce --node NODE[,NODE...] record`: where each node's profile comes
 * back here (recce.pb.gz from one node, recce.{node}.pb.gz from several,
 * -o DIR/ as DIR/{node}.pb.gz, DIR made if missing), and --merge, which makes one profile of
 * the nodes' with a "host" label on every sample.
 *
 * Ownership: node_record_prepare() fills a caller-owned struct whose
 * argv and strings are its own until node_record_release().
 */
#ifndef RECCE_CLI_NODE_RECORD_H
#define RECCE_CLI_NODE_RECORD_H

#include <stddef.h>

struct node_record {
	int argc;
	char **argv; /* what goes to the nodes */
	char *out;   /* the -o path put in argv (may hold {node}) */
	char *merge; /* --merge: the merged profile's path here, or NULL */
	int changed; /* argv is a vector of this struct's */
};

/* Prepares argv (argv[0] the command) to run on one node or several
 * (many). Returns 0, or RECCE_EXIT_USAGE after saying why. */
int node_record_prepare(struct node_record *r, int many, int argc, char **argv);

/* After the run on nodes[0..n): with --merge, the nodes' profiles made
 * one, each sample labelled with its node, and theirs removed. Returns
 * the run's status, or 1 when the merge failed (said). */
int node_record_finish(const struct node_record *r, const char *const *nodes, size_t n, int status);

void node_record_release(struct node_record *r);

/* path with ".{node}" before its extension (".pb.gz" taken whole), or at
 * its end: a new string, or NULL when out of memory. */
char *node_record_each(const char *path);

#endif
