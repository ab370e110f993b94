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
 */
#ifndef RECCE_MULTI_H
#define RECCE_MULTI_H

struct remote_config;

/* nodes: a comma-separated list. Returns the worst exit status of the
 * nodes' commands (1 when a node cannot be reached), or 2 for a usage
 * error: -o files, which would collide (but for a --wrap set, kept on
 * each node). */
int remote_run_many(const struct remote_config *cfg, const char *nodes, int argc, char **argv);

#endif
