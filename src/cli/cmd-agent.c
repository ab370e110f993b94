/*
 * recce agent: serves recce's commands to clients of other places
 * (remote/agent.h) on a local socket, or on standard input and output for
 * SSH; the page docs/recce-agent.md is its --help.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "remote/agent.h"
#include "util/signals.h"

struct agent_args {
	const char *socket;
	const char *audit;
	int stdio;
};

static const struct opt agent_options[] = {
    OPT_STRING_(0, "socket", "PATH", struct agent_args, socket,
		"the local socket (default /run/recce/agent.sock as root)"),
    OPT_FLAG_(0, "stdio", struct agent_args, stdio,
	      "serve one client on standard input and output (under SSH)"),
    OPT_STRING_(0, "audit", "FILE", struct agent_args, audit,
		"append every command run to FILE (default: audit.log beside the socket)"),
    OPT_END_(),
};

int cmd_agent(int argc, char **argv)
{
	struct agent_args a;
	char sock[PATH_MAX], audit[PATH_MAX + 16], self[PATH_MAX];

	memset(&a, 0, sizeof(a));
	int first = options_parse("agent", agent_options, 0, argc, argv, &a, NULL);
	if (first < argc)
		usage_die("agent", "unexpected argument '%s'", argv[first]);
	if (a.stdio && a.socket)
		usage_die("agent", "give --socket or --stdio, not both");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		die("cannot find recce's own binary: %s", strerror(errno));
	self[n] = 0;

	struct agent_config cfg = {0};
	cfg.self = self;
	cfg.stdio = a.stdio;
	cfg.stop_fd = -1;
	if (!a.stdio) {
		if (!a.socket) {
			agent_default_socket(sock, sizeof(sock));
			a.socket = sock;
		}
		cfg.socket = a.socket;
		if (!a.audit) {
			snprintf(audit, sizeof(audit), "%s", a.socket);
			char *slash = strrchr(audit, '/');
			snprintf(slash ? slash + 1 : audit,
				 sizeof(audit) - (size_t)(slash ? slash + 1 - audit : 0),
				 "audit.log");
			a.audit = audit;
		}
	}
	cfg.audit = a.audit;
	sigset_t old;
	if (!a.stdio) {
		cfg.stop_fd = block_stop_signals(&old);
		note("serving on %s (audit log %s); Ctrl-C to stop", cfg.socket, cfg.audit);
	}
	const char *what = "";
	int err = agent_serve(&cfg, &what);
	if (!a.stdio)
		unblock_stop_signals(cfg.stop_fd, &old);
	if (err == -EADDRINUSE)
		die("%s: %s: stop it first, or give another --socket", cfg.socket, what);
	if (err && !a.stdio)
		die("%s: %s: %s", cfg.socket, what, strerror(-err));
	return err ? RECCE_EXIT_ERROR : 0;
}
