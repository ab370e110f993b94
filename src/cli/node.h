/*
 * `recce --node NODE COMMAND ...`: runs COMMAND on one node's agent or,
 * for NODE,NODE..., on several at once with their lines merged by time
 * (remote/client.h, remote/multi.h), and writes here what the nodes
 * report. Returns the command's exit status, 1 when a node cannot be
 * reached, 2 for a usage error.
 */
#ifndef RECCE_CLI_NODE_H
#define RECCE_CLI_NODE_H

int node_run(const char *node, int argc, char **argv);

#endif
