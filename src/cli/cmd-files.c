/*
 * recce files and recce fetch: the files a client keeps on a node (a
 * trace's --wrap set run there), listed and brought here. Both speak to
 * an agent (cli/node.h): the node of --node, else this machine's
 * own agent on its default socket. The pages docs/recce-files.md and
 * docs/recce-fetch.md are their --help.
 */
#include <stdio.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/node.h"
#include "cli/options.h"
#include "cli/usage.h"

struct fetch_args {
	int remove;
};

static const struct opt files_options[] = {
    OPT_END_(),
};

static const struct opt fetch_options[] = {
    OPT_FLAG_(0, "remove", struct fetch_args, remove, "delete them from the node once here"),
    OPT_END_(),
};

/* The node of a command given without --node: this machine's agent. */
static const char *local_agent(char *buf, size_t len)
{
	char sock[4096];

	dirs_agent_socket(sock, sizeof(sock));
	snprintf(buf, len, "unix:%s", sock);
	return buf;
}

int cmd_files(int argc, char **argv)
{
	char node[4200];

	int at = options_parse("files", files_options, 0, argc, argv, NULL, NULL);
	if (at < argc)
		usage_die("files", "unexpected argument '%s' (fetch brings files here)", argv[at]);
	char *av[] = {"files", NULL};
	return node_run(local_agent(node, sizeof(node)), 1, av);
}

int cmd_fetch(int argc, char **argv)
{
	struct fetch_args a = {0};
	char node[4200];

	int at = options_parse("fetch", fetch_options, 0, argc, argv, &a, NULL);
	if (at >= argc)
		usage_die("fetch", "give the names of the files to bring: recce fetch NAME...");
	char *av[argc - at + 3];
	int n = 0;
	av[n++] = "fetch";
	for (int i = at; i < argc; i++)
		av[n++] = argv[i];
	if (a.remove)
		av[n++] = "--remove";
	av[n] = NULL;
	return node_run(local_agent(node, sizeof(node)), n, av);
}
