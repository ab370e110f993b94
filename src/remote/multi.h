/*
 * One command on several nodes at once (`recce --node web-1,web-2 trace
 * ...`): each node's clock is measured against this one's first (the
 * agent's Hello carries its time; the offset is taken halfway through the
 * round trip), the command runs on every node as remote_run() runs it on
 * one, and their standard outputs are merged into one, line by line, in
 * time order. A line that starts with a time of day (HH:MM:SS.ffffff, as
 * trace, replay and events print) is moved onto this machine's clock and
 * ordered by it; each line is prefixed with its node. A line waits at most
 * LATENESS for the other nodes' lines to catch up, so a quiet node does
 * not hold the others back. Standard error passes through at once, each
 * line prefixed with its node.
 *
 * Like remote_run(), it says nothing itself: the merged lines go to the
 * ui's output callback, messages to its note callback; each node's child
 * calls the same callbacks, with its standard output and error on the
 * pipes this process reads.
 */
#ifndef RECCE_MULTI_H
#define RECCE_MULTI_H

#include <stddef.h>
#include <stdint.h>

#define REMOTE_MAX_NODES 64

struct remote_config;
struct remote_ui;

/* Runs argv on the n nodes (at most REMOTE_MAX_NODES), each with its own
 * -o paths (remote_argv_for_node(); a path that would come back from
 * each to one place is the caller's to refuse: remote_outputs_collide).
 * Returns the worst exit status of the nodes' commands (1 when a node
 * cannot be reached), or -E2BIG for too many nodes. */
int remote_run_many(const struct remote_config *cfg, const struct remote_ui *ui,
		    const char *const *nodes, size_t n, int argc, char **argv);

/* The trace files among argv's -o files, brought here from node: stamped
 * with its name and its clock's offset from this one's, so that replay
 * merges them with other hosts' on one clock (trace_file_stamp). */
void remote_stamp_traces(const char *node, int64_t offset_ns, int argc, char **argv);

#endif
