/*
 * The agent's grant, as the command it runs reads and enforces it (see
 * grant.h).
 */
#include "cli/grant.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/launch.h"
#include "remote/scopes.h"
#include "util/term-safe.h"

static struct {
	int active;
	unsigned scopes;
	int verdict_fd;
	char who[300];
} grant = {0, 0, -1, ""};

void grant_init(void)
{
	const char *env = getenv(SCOPES_GRANT_ENV);
	char scopes[64];
	int fd = -1, used = 0;

	if (!env)
		return;
	grant.active = 1;
	if (sscanf(env, "%63s %d %n", scopes, &fd, &used) == 2 && used > 0 &&
	    scope_parse(scopes, &grant.scopes) == 0) {
		snprintf(grant.who, sizeof(grant.who), "%s", env + used);
		grant.verdict_fd = fd;
		/* Not for a program the command starts. */
		if (fd >= 0)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	} else {
		grant.scopes = 0; /* a grant that does not parse grants nothing */
		snprintf(grant.who, sizeof(grant.who), "this client");
	}
	unsetenv(SCOPES_GRANT_ENV);
	/* Whatever a command forgets to ask, nothing starts without exec. */
	if (!(grant.scopes & SCOPE_EXEC))
		launch_forbid();
}

/* Writes the refusal for the audit log and the client, and exits 1. */
__attribute__((noreturn, format(printf, 1, 2))) static void refuse(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (grant.verdict_fd >= 0)
		dprintf(grant.verdict_fd, "%s\n", msg);
	fflush(stdout);
	fputs("recce: the agent refused: ", stderr);
	term_fputs(msg, stderr);
	fputc('\n', stderr);
	exit(1);
}

void grant_need(unsigned scope, const char *what)
{
	char msg[1024];

	if (!grant.active || !(scope & ~grant.scopes))
		return;
	refuse("%s", scope_refusal(msg, sizeof(msg), grant.who, grant.scopes, what, scope));
}

void grant_output(const char *path, const char *what)
{
	if (!grant.active || strcmp(path, "-") == 0)
		return;
	if (!*path || strchr(path, '/') || strcmp(path, ".") == 0 || strcmp(path, "..") == 0)
		refuse("%s '%s' is a path: through the agent a file is written under a plain "
		       "name in the command's own directory, and the client brings it back",
		       what, path);
}
