/*
 * The continuous profiler of `recce agent --continuous`, run in a process
 * of its own beside the agent's server: its options, its start (the agent
 * goes on only once sampling runs) and its messages.
 */
#ifndef RECCE_CLI_AGENT_CONTINUOUS_H
#define RECCE_CLI_AGENT_CONTINUOUS_H

#include <sys/types.h>

struct agent_continuous_args {
	int on;
	const char *store, *window, *rate, *http, *retain, *max_store, *export_url;
	const char *call_graph; /* --call-graph auto|fp|dwarf[,BYTES]; NULL: auto */
	const char *http_token; /* --http-token FILE */
	const char *tls;	/* the agent's certificates, for --http on the network */
};

/* Starts the profiler (a child that stops when stop_fd is readable or
 * the agent dies) and returns its pid once it samples; dies with its
 * message when it cannot start. */
pid_t agent_continuous_start(const struct agent_continuous_args *a, int stop_fd);

/* Stops the profiler, which writes its last window, and reaps it. */
void agent_continuous_stop(pid_t pid);

#endif
