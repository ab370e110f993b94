/*
 * recce certs: the certificates of agents listening over TLS and of their
 * clients (remote/tls.h); the page docs/recce-certs.md is its --help.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/dirs.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "remote/tls.h"
#include "util/array.h"

struct certs_args {
	const char *tls;
	const char **hosts;
	size_t nhosts, hosts_cap;
};

static void add_host(void *ctx, const char *arg, const struct opt *o)
{
	struct certs_args *a = ctx;
	const char **n = array_reserve(a->hosts, &a->hosts_cap, a->nhosts + 1, sizeof(*n));

	(void)o;
	if (!n)
		die("out of memory");
	a->hosts = n;
	a->hosts[a->nhosts++] = arg;
}

static const struct opt certs_options[] = {
    OPT_CALL_(0, "host", "NAME", add_host, 0,
	      "init: another name or address the agent answers to (repeatable)"),
    OPT_CALL_(0, "ip", "ADDR", add_host, 0,
	      "host: an address (or another name) the host's agent answers to (repeatable)"),
    OPT_STRING_(0, "tls", "DIR", struct certs_args, tls,
		"client, host, revoke: the directory of the CA (default /etc/recce/tls as root)"),
    OPT_END_(),
};

int cmd_certs(int argc, char **argv)
{
	struct certs_args a;
	char dir[PATH_MAX], err[1024];

	memset(&a, 0, sizeof(a));
	int first = options_parse("certs", certs_options, 0, argc, argv, &a, NULL);
	if (first >= argc)
		usage_die("certs", "give init DIR, client NAME, host NAME or revoke NAME");
	const char *what = argv[first];
	int is_host = strcmp(what, "host") == 0;
	/* client, host and revoke: one name, in the CA's directory. */
	if (strcmp(what, "client") == 0 || is_host || strcmp(what, "revoke") == 0) {
		if (first + 2 != argc)
			usage_die("certs", "%s takes one name", what);
		if (a.nhosts && !is_host)
			usage_die("certs", "--host goes with init, --ip with host");
		if (!a.tls) {
			dirs_tls(1, dir, sizeof(dir));
			a.tls = dir;
		}
	}
	if (strcmp(what, "init") == 0) {
		if (first + 2 != argc)
			usage_die("certs", "init takes one directory");
		if (a.tls)
			usage_die("certs", "init makes the directory it is given: no --tls");
		if (tls_certs_init(argv[first + 1], a.hosts, a.nhosts, err, sizeof(err)) < 0)
			die("%s", err);
		note("made a CA, an agent certificate and a client certificate in %s: give the "
		     "agent --tls %s, and copy ca.pem, client.pem and client.key to a client's "
		     "~/.config/recce/tls",
		     argv[first + 1], argv[first + 1]);
	} else if (strcmp(what, "client") == 0) {
		if (tls_certs_client(a.tls, argv[first + 1], err, sizeof(err)) < 0)
			die("%s", err);
		note("made %s/%s: copy its ca.pem, client.pem and client.key to that client's "
		     "~/.config/recce/tls",
		     a.tls, argv[first + 1]);
	} else if (is_host) {
		if (tls_certs_host(a.tls, argv[first + 1], a.hosts, a.nhosts, err, sizeof(err)) < 0)
			die("%s", err);
		note("made %s/" TLS_HOSTS_DIR "/%s: copy its ca.pem, agent.pem and agent.key to "
		     "that host's /etc/recce/tls (or give its agent --tls with them); 'recce certs "
		     "revoke %s' withdraws it",
		     a.tls, argv[first + 1], argv[first + 1]);
	} else if (strcmp(what, "revoke") == 0) {
		int rc = tls_certs_revoke(a.tls, argv[first + 1], err, sizeof(err));
		if (rc < 0)
			die("%s", err);
		if (rc == 1)
			note("%s was revoked already: %s/" TLS_CRL_FILE " lists it",
			     argv[first + 1], a.tls);
		else
			note("revoked %s in %s/" TLS_CRL_FILE
			     ": agents and clients whose --tls directory holds it refuse that "
			     "certificate from their next connection on; copy it to every other "
			     "agent's and client's --tls directory",
			     argv[first + 1], a.tls);
	} else {
		usage_die("certs", "'%s' is not init, client, host or revoke", what);
	}
	free(a.hosts);
	return 0;
}
