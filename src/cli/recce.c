/*
 * recce's entry point: git-style dispatch from one commands[] table to one
 * cmd_NAME() per subcommand file. `recce CMD --help` and `recce help CMD`
 * print the same page, which is docs/recce-CMD.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/grant.h"
#include "cli/help.h"
#include "cli/node.h"
#include "cli/usage.h"
#include "util/progress.h"
#include "util/version.h"

/* Where a command runs when a node is given (as git's RUN_SETUP says
 * what a command needs): on the node (0), ... */
enum {
	RUN_SETUP = 1, /* ...here unless --node sends it: RECCE_NODE does not (agent, certs) */
	RUN_HERE = 2,  /* ...always here (help) */
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	int where; /* 0, RUN_SETUP or RUN_HERE */
	const char *summary;
};

static const struct command commands[] = {
    {"record", cmd_record, 0, "sample a live process or a command into a profile"},
    {"report", cmd_report, 0, "show a profile: top functions, lines, folded stacks, flamegraph"},
    {"query", cmd_query, 0, "profiles of the continuous agent's store, by time and process"},
    {"view", cmd_view, 0, "a profile's page in the browser: flamegraph, search, top functions"},
    {"top", cmd_top, 0, "a live view of the threads of processes and the functions they run"},
    {"trace", cmd_trace, 0, "trace calls of live processes: arguments, returns, under limits"},
    {"dump", cmd_dump, 0, "every thread's stack of a running process, now, as pstack shows it"},
    {"capture", cmd_capture, 0,
     "flamegraphs of the next calls of a function, each call on its own"},
    {"patch", cmd_patch, 0, "replace a function of a running process with a new one, list, undo"},
    {"replay", cmd_replay, 0, "print trace files, merged from several processes by time"},
    {"symbolize", cmd_symbolize, 0, "name the addresses of a profile recorded with --no-symbolize"},
    {"addr2line", cmd_addr2line, 0, "file:line and function of addresses, as GNU addr2line prints"},
    {"events", cmd_events, 0,
     "events a program wrote with librecce: live, saved, or after a crash"},
    {"seq", cmd_seq, 0, "one request across processes: sequence tokens merged into a diagram"},
    {"tasks", cmd_tasks, 0,
     "the tasks of a program's event loops, per type, live or for Prometheus"},
    {"agent", cmd_agent, RUN_SETUP,
     "serve recce's commands to other places: a local socket, SSH, TLS"},
    {"files", cmd_files, 0, "the files kept on an agent's node for you (a trace's --wrap set)"},
    {"fetch", cmd_fetch, 0, "bring files kept on an agent's node here"},
    {"certs", cmd_certs, RUN_SETUP,
     "make the certificates of agents listening over TLS and their clients"},
    {"help", cmd_help, RUN_HERE, "show the help page of a subcommand"},
};

/* The commands, after a usage line unless the overview page (which has
 * its own) came first. */
static void list_commands(FILE *out, int usage)
{
	if (usage)
		fprintf(out, "usage: recce [--version] [--help] [--tls DIR] [--node NODE] COMMAND "
			     "[ARGS]\n\n");
	size_t n = sizeof(commands) / sizeof(commands[0]), width = 0;
	for (size_t i = 0; i < n; i++)
		if (strlen(commands[i].name) > width)
			width = strlen(commands[i].name);
	fprintf(out, "commands:\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "   %-*s %s\n", (int)width, commands[i].name, commands[i].summary);
	fprintf(out, "\n'recce help COMMAND' or 'recce COMMAND --help' shows a command's page.\n");
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		help_show("", stdout);
		list_commands(stdout, 0);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return help_show("help", stdout) ? 1 : 0;
	if (help_show(argv[1], stdout) < 0) {
		error("no help page for '%s'", argv[1]);
		list_commands(stderr, 1);
		return RECCE_EXIT_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	progress_init(); /* before anything could start a program */
	grant_init();	 /* what the agent lets its client do, if it runs us */
	/*
	 * libdw fetches missing debug info over the network when
	 * DEBUGINFOD_URLS is set (Debian sets it in login shells). A profiler
	 * must never stall on a network at the end of a recording, so recce
	 * uses only the debug info on this machine unless told otherwise.
	 */
	if (!getenv("RECCE_DEBUGINFOD")) {
		unsetenv("DEBUGINFOD_URLS");
	} else {
		/* Asked: a server that stalls costs seconds, not elfutils'
		 * minute and a half, and a terminal shows each download. */
		setenv("DEBUGINFOD_TIMEOUT", "10", 0);
		setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
		if (isatty(STDERR_FILENO))
			setenv("DEBUGINFOD_PROGRESS", "1", 0);
	}
	/* --node NODE (or RECCE_NODE): the command runs on that node's agent;
	 * --tls DIR: the client's certificates for a TLS node (RECCE_TLS). */
	const char *node = getenv("RECCE_NODE");
	int node_given = 0;
	while (argc >= 2) {
		const char *opt = argv[1];
		int is_node = strncmp(opt, "--node", 6) == 0 && (!opt[6] || opt[6] == '=');
		int is_tls = strncmp(opt, "--tls", 5) == 0 && (!opt[5] || opt[5] == '=');
		if (!is_node && !is_tls)
			break;
		const char *eq = strchr(opt, '=');
		if (!eq && argc < 3)
			usage_die("agent", "%s wants a value", opt);
		const char *val = eq ? eq + 1 : argv[2];
		if (is_node) {
			node = val;
			node_given = 1;
		} else {
			setenv("RECCE_TLS", val, 1);
		}
		argv += eq ? 1 : 2;
		argc -= eq ? 1 : 2;
	}
	if (argc < 2) {
		list_commands(stderr, 1);
		return RECCE_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	const struct command *c = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]) && !c; i++)
		if (strcmp(commands[i].name, cmd) == 0)
			c = &commands[i];
	/* A command the node's recce may know though this one does not goes
	 * there too. */
	int where = c ? c->where : 0;
	if (node && *node && where != RUN_HERE && (node_given || where != RUN_SETUP) &&
	    cmd[0] != '-')
		return node_run(node, argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("recce %s\n", RECCE_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return cmd_help(1, argv + 1);
	if (!c) {
		error("'%s' is not a recce command", cmd);
		list_commands(stderr, 1);
		return RECCE_EXIT_USAGE;
	}
	for (int a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--") == 0)
			break;
		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)
			return help_show(cmd, stdout) ? 1 : 0;
	}
	return c->fn(argc - 1, argv + 1);
}
