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

#include "cli/agent-continuous.h"
#include "cli/builtin.h"
#include "cli/config-file.h"
#include "cli/dirs.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "remote/agent.h"
#include "remote/tls.h"
#include "util/signals.h"

struct agent_args {
	struct scopes scopes;
	const char *scopes_file;
	const char *config; /* read by config_expand() before the rest */
	const char *socket;
	const char *audit;
	const char *files;
	const char *client_buffer;
	const char *listen;
	const char *tls;
	int stdio;
	struct agent_continuous_args cont;
};

static void allow_cb(void *ctx, const char *arg, const struct opt *o)
{
	struct agent_args *a = ctx;
	char deny[256];

	if (o->set) { /* --deny WHO: a grant of nothing */
		if ((size_t)snprintf(deny, sizeof(deny), "%s=none", arg) >= sizeof(deny) ||
		    scopes_add(&a->scopes, deny) < 0)
			usage_die("agent",
				  "--deny wants cert:NAME, uid:N, cert:* or uid:*: not '%s'", arg);
		return;
	}
	if (scopes_add(&a->scopes, arg) < 0)
		usage_die("agent",
			  "--allow wants cert:NAME, uid:N, cert:* or uid:* = read, trace, "
			  "patch, exec or admin, comma-separated: not '%s'",
			  arg);
}

static const struct opt agent_options[] = {
    OPT_CALL_(0, "allow", "WHO=SCOPES", allow_cb, 0,
	      "what a client may do: read, trace, patch, exec, admin (repeatable)"),
    OPT_CALL_(0, "deny", "WHO", allow_cb, 1, "refuse every request of this client (repeatable)"),
    OPT_STRING_(0, "scopes", "FILE", struct agent_args, scopes_file,
		"grants from a file, one WHO=SCOPES a line"),
    OPT_STRING_(0, "socket", "PATH", struct agent_args, socket,
		"the local socket (default /run/recce/agent.sock as root)"),
    OPT_FLAG_(0, "stdio", struct agent_args, stdio,
	      "serve one client on standard input and output (under SSH)"),
    OPT_STRING_(0, "audit", "FILE", struct agent_args, audit,
		"append every command run to FILE (default: audit.log beside the socket)"),
    OPT_STRING_(0, "files", "DIR", struct agent_args, files,
		"keep clients' files here (default /var/lib/recce/files as root)"),
    OPT_STRING_(0, "client-buffer", "SIZE", struct agent_args, client_buffer,
		"output held for a client that reads slowly, then lines dropped (default 8M)"),
    OPT_STRING_(0, "listen", "[ADDR:]PORT", struct agent_args, listen,
		"also serve TCP, over TLS with client certificates (loopback unless ADDR)"),
    OPT_STRING_(0, "tls", "DIR", struct agent_args, tls,
		"the certificates of --listen (default /etc/recce/tls as root)"),
    OPT_FLAG_(0, "continuous", struct agent_args, cont.on,
	      "also profile every process, all the time, into the store"),
    OPT_STRING_(0, "store", "DIR", struct agent_args, cont.store,
		"the store of --continuous (default /var/lib/recce as root)"),
    OPT_STRING_(0, "window", "SPAN", struct agent_args, cont.window,
		"the length of a window (default 10s)"),
    OPT_STRING_(0, "rate", "HZ", struct agent_args, cont.rate,
		"samples per second per CPU (default 19)"),
    OPT_STRING_(0, "call-graph", "auto|fp|dwarf[,BYTES]", struct agent_args, cont.call_graph,
		"how stacks are walked, as recce record walks them (default auto)"),
    OPT_STRING_(0, "retain", "SPAN", struct agent_args, cont.retain,
		"delete windows older than SPAN (default 7d)"),
    OPT_STRING_(0, "max-store", "SIZE", struct agent_args, cont.max_store,
		"delete the oldest windows past SIZE (default 1G)"),
    OPT_STRING_(0, "export", "clickhouse://HOST[:PORT]/DB", struct agent_args, cont.export_url,
		"ship every window to this ClickHouse database too"),
    OPT_STRING_(0, "export-password", "FILE", struct agent_args, cont.export_password,
		"--export's password, from the first line of FILE (never in the URL)"),
    OPT_STRING_(0, "export-batch", "N", struct agent_args, cont.export_batch,
		"--export N windows at a time, one INSERT a table (default 1)"),
    OPT_STRING_(0, "export-retain", "SPAN", struct agent_args, cont.export_retain,
		"drop the fleet store's days older than SPAN (whole days; default: kept)"),
    OPT_STRING_(0, "http-token", "FILE", struct agent_args, cont.http_token,
		"--http on the network: the token, from FILE (default: a new one)"),
    OPT_STRING_(0, "http", "[ADDR:]PORT", struct agent_args, cont.http,
		"serve the page and /metrics here (default 127.0.0.1:7451; off)"),
    OPT_STRING_(0, "config", "FILE", struct agent_args, config,
		"options from FILE, a NAME VALUE a line (the command line wins)"),
    OPT_END_(),
};

int cmd_agent(int argc, char **argv)
{
	struct agent_args a;
	char sock[PATH_MAX], audit[PATH_MAX + 16], self[PATH_MAX], files[PATH_MAX];

	/* Before any process is forked: none of them, the profiler and its
	 * page included, may be ended by a client that closes mid-answer. */
	signal(SIGPIPE, SIG_IGN);
	memset(&a, 0, sizeof(a));
	argc = config_expand("agent", argc, argv, &argv);
	int first = options_parse("agent", agent_options, 0, argc, argv, &a, NULL);
	if (first < argc)
		usage_die("agent", "unexpected argument '%s'", argv[first]);
	if (a.stdio && (a.socket || a.listen))
		usage_die("agent", "--stdio serves one client: not with --socket or --listen");
	if (a.tls && !a.listen && !a.cont.on)
		usage_die("agent", "--tls goes with --listen, or with --continuous --http on the "
				   "network");
	if (a.cont.http_token && !a.cont.on)
		usage_die("agent", "--http-token goes with --continuous --http");
	a.cont.tls = a.tls;
	if (!a.cont.on &&
	    (a.cont.store || a.cont.window || a.cont.rate || a.cont.retain || a.cont.max_store ||
	     a.cont.http || a.cont.export_url || a.cont.export_password || a.cont.call_graph))
		usage_die("agent",
			  "--store, --window, --rate, --call-graph, --retain, --max-store, "
			  "--export, --export-password and --http go with --continuous");
	if (a.cont.export_password && !a.cont.export_url)
		usage_die("agent", "--export-password goes with --export");
	if (a.cont.export_batch && !a.cont.export_url)
		usage_die("agent", "--export-batch goes with --export");
	if (a.cont.export_retain && !a.cont.export_url)
		usage_die("agent", "--export-retain goes with --export");
	if (a.cont.on && a.stdio)
		usage_die("agent", "--continuous runs beside the local agent, not under --stdio");
	if (a.cont.on)
		agent_continuous_options(&a.cont);
	char tls[PATH_MAX];
	if (a.listen) {
		if (!a.tls) {
			dirs_tls(1, tls, sizeof(tls));
			a.tls = tls;
		}
		char f[PATH_MAX + 16];
		if (tls_agent_files(a.tls, f, sizeof(f)) < 0)
			die("--listen needs %s: make the certificates with 'recce certs init %s'",
			    f, a.tls);
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		die("cannot find recce's own binary: %s", strerror(errno));
	self[n] = 0;

	if (a.scopes_file) {
		int line = 0;
		int err = scopes_load(&a.scopes, a.scopes_file, &line);
		if (err == -EINVAL)
			die("%s:%d: not WHO=SCOPES (cert:NAME, uid:N, cert:* or uid:* = read, "
			    "trace, "
			    "patch)",
			    a.scopes_file, line);
		if (err)
			die("cannot read %s: %s", a.scopes_file, strerror(-err));
	}
	struct agent_config cfg = {0};
	cfg.scopes = &a.scopes;
	cfg.self = self;
	cfg.stdio = a.stdio;
	cfg.stop_fd = -1;
	if (!a.stdio) {
		if (!a.socket) {
			dirs_agent_socket(sock, sizeof(sock));
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
	if (!a.files) {
		dirs_files(files, sizeof(files));
		a.files = files;
	}
	cfg.files = a.files;
	if (a.client_buffer) {
		uint64_t size = 0;
		if (parse_size_prefix(a.client_buffer, &size) != (int)strlen(a.client_buffer) ||
		    size < 4096 || size > (1ULL << 32))
			usage_die("agent",
				  "--client-buffer wants a size from 4K to 4G, such as 8M, "
				  "not '%s'",
				  a.client_buffer);
		cfg.client_buffer = (size_t)size;
	}
	cfg.listen = a.listen;
	cfg.tls = a.tls;
	sigset_t old;
	if (!a.stdio) {
		cfg.stop_fd = block_stop_signals(&old);
		if (a.listen)
			note("serving on %s and on %s over TLS (%s; audit log %s); Ctrl-C to stop",
			     cfg.socket, a.listen, a.tls, cfg.audit);
		else
			note("serving on %s (audit log %s); Ctrl-C to stop", cfg.socket, cfg.audit);
	}
	void *profiler = a.cont.on ? agent_continuous_start(&a.cont, cfg.stop_fd) : NULL;
	if (profiler) {
		cfg.attach = agent_continuous_attach;
		cfg.attach_arg = profiler;
	}
	const char *what = "";
	int err = agent_serve(&cfg, &what);
	int lost = agent_continuous_stop(profiler);
	if (!a.stdio)
		unblock_stop_signals(cfg.stop_fd, &old);
	if (err == -EADDRINUSE)
		die("%s: %s: stop it first, or give another --socket", cfg.socket, what);
	if (err && !a.stdio)
		die("%s: %s: %s", a.listen && strstr(what, "--listen") ? a.listen : cfg.socket,
		    what, strerror(-err));
	scopes_release(&a.scopes);
	return err || lost ? RECCE_EXIT_ERROR : 0;
}
