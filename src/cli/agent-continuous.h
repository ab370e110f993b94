/*
 * The continuous profiler of `recce agent --continuous`, run in a process
 * of its own beside the agent's server: its options, its start (the agent
 * goes on only once sampling runs), its keeper (a profiler that dies is
 * started again) and its messages.
 */
#ifndef RECCE_CLI_AGENT_CONTINUOUS_H
#define RECCE_CLI_AGENT_CONTINUOUS_H

#include <sys/types.h>

struct agent_continuous_args {
	int on;
	const char *store, *window, *rate, *http, *retain, *max_store, *export_url;
	const char *export_password; /* --export-password FILE */
	const char *export_batch;    /* --export-batch N */
	const char *export_retain;   /* --export-retain SPAN */
	const char *call_graph; /* --call-graph auto|fp|dwarf[,BYTES]; NULL: auto */
	const char *http_token; /* --http-token FILE */
	const char *tls;	/* the agent's certificates, for --http on the network */
};

struct evloop;

/* Reads and checks the profiler's options, --export's URL and password
 * among them (a usage error exits 2 before the agent takes its socket or
 * a port). */
void agent_continuous_options(const struct agent_continuous_args *a);
/* Starts the profiler with those options (a child that stops when
 * stop_fd is readable or the agent dies) and returns its keeper once it
 * samples; dies with its message when it cannot start. */
void *agent_continuous_start(const struct agent_continuous_args *a, int stop_fd);

/* The keeper in the agent's loop (struct agent_config's attach): a
 * profiler that dies is said and started again 1 s later, with its
 * restarts counted in /metrics; the fifth death in 10 minutes, or a
 * profiler that cannot start again, stops the loop. 0 or -errno. */
int agent_continuous_attach(void *keeper, struct evloop *loop);

/* Stops the profiler, which writes its last window, and reaps it.
 * Returns -1 when the keeper gave up on it (the agent exits 1), else 0.
 * NULL: no profiler. */
int agent_continuous_stop(void *keeper);

#endif
