/*
 * Where recce's own files live, and how it reaches nodes (see dirs.h):
 * the one place that reads the environment for them.
 */
#include "cli/dirs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/usage.h"
#include "remote/client.h"
#include "symbols/symbolize.h"

int dirs_cache(char *buf, size_t len, uint64_t *max_bytes)
{
	const char *env = getenv("RECCE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME"), *max = getenv("RECCE_CACHE_MAX");
	uint64_t v = 0;
	int n;

	*max_bytes = max && parse_size_prefix(max, &v) == (int)strlen(max) ? v : 0;
	if (env)
		n = env[0] ? snprintf(buf, len, "%s", env) : -1;
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/recce", xdg);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/cache/recce");
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/recce", home);
	else
		n = -1;
	return n < 0 || (size_t)n >= len ? -ENOENT : 0;
}

int dirs_use_cache(struct symbolizer *s, uint64_t build_max)
{
	char dir[4096];
	uint64_t max;

	if (dirs_cache(dir, sizeof(dir), &max) < 0)
		return 0;
	return symbolizer_set_cache(s, dir, max, build_max);
}

void dirs_data(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (geteuid() == 0)
		snprintf(buf, len, "/var/lib/recce");
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/recce", xdg);
	else
		snprintf(buf, len, "%s/.local/share/recce", home ? home : "");
}

void dirs_files(char *buf, size_t len)
{
	char data[4096];

	/* Beside the continuous store: recce's one data directory. */
	dirs_data(data, sizeof(data));
	snprintf(buf, len, "%s/files", data);
}

void dirs_agent_socket(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(buf, len, "/run/recce/agent.sock");
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/recce/agent.sock", xdg);
	else
		snprintf(buf, len, "/tmp/recce-%u/agent.sock", (unsigned)geteuid());
}

void dirs_tls(int agent, char *buf, size_t len)
{
	const char *env = getenv("RECCE_TLS"), *home = getenv("HOME");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (agent && geteuid() == 0)
		snprintf(buf, len, "/etc/recce/tls");
	else
		snprintf(buf, len, "%s/.config/recce/tls", home && *home ? home : ".");
}

const struct remote_config *dirs_remote(void)
{
	static char tls[4096];
	static struct remote_config cfg;
	const char *ssh = getenv("RECCE_SSH"), *remote = getenv("RECCE_REMOTE");

	dirs_tls(0, tls, sizeof(tls));
	cfg.tls_dir = tls;
	cfg.ssh = ssh && *ssh ? ssh : NULL;
	cfg.remote = remote && *remote ? remote : NULL;
	return &cfg;
}
