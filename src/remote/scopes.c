/*
 * The agent's scopes (see scopes.h).
 */
#include "remote/scopes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/lines.h"

#define NSCOPES 5
static const char *const names[NSCOPES] = {"read", "trace", "patch", "exec", "admin"};

int scope_parse(const char *text, unsigned *mask)
{
	*mask = 0;
	if (strcmp(text, "none") == 0)
		return 0; /* a client denied everything */
	while (*text) {
		size_t n = strcspn(text, ",");
		int found = 0;
		for (int i = 0; i < NSCOPES; i++)
			if (strlen(names[i]) == n && strncmp(text, names[i], n) == 0) {
				*mask |= 1u << i;
				found = 1;
			}
		if (!found)
			return -EINVAL;
		text += n;
		if (*text == ',')
			text++;
	}
	return *mask ? 0 : -EINVAL;
}

static int valid_who(const char *who, size_t n)
{
	if (n > 5 && strncmp(who, "cert:", 5) == 0)
		return 1;
	if (n > 4 && strncmp(who, "uid:", 4) == 0) {
		if (n == 5 && who[4] == '*')
			return 1;
		for (size_t i = 4; i < n; i++)
			if (who[i] < '0' || who[i] > '9')
				return 0;
		return 1;
	}
	return 0;
}

int scopes_add(struct scopes *s, const char *spec)
{
	const char *eq = strchr(spec, '=');
	unsigned mask;

	if (!eq || !valid_who(spec, (size_t)(eq - spec)) ||
	    (size_t)(eq - spec) >= sizeof(s->v[0].who) || scope_parse(eq + 1, &mask) < 0)
		return -EINVAL;
	size_t n = (size_t)(eq - spec);
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i].who) == n && strncmp(s->v[i].who, spec, n) == 0) {
			s->v[i].scopes = mask;
			return 0;
		}
	struct scope_grant *v = array_reserve(s->v, &s->cap, s->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	memcpy(v[s->n].who, spec, n);
	v[s->n].who[n] = 0;
	v[s->n++].scopes = mask;
	return 0;
}

int scopes_load(struct scopes *s, const char *path, int *line)
{
	char buf[512];
	int got;

	*line = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int err = 0;
	while (!err && (got = lines_read(f, buf, sizeof(buf))) != 0) {
		++*line;
		if (got < 0) {
			err = -EINVAL;
			break;
		}
		char *p = buf;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t len = strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
			p[--len] = 0;
		if (!*p || *p == '#')
			continue;
		err = scopes_add(s, p);
	}
	fclose(f);
	return err;
}

void scopes_release(struct scopes *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

unsigned scope_needed(const char *command)
{
	static const char *const read_cmds[] = {
	    "record", "report", "top",	"replay", "symbolize", "addr2line", "events",
	    "seq",    "tasks",	"help", "query",  "files",     "fetch"};

	for (size_t i = 0; i < sizeof(read_cmds) / sizeof(read_cmds[0]); i++)
		if (strcmp(command, read_cmds[i]) == 0)
			return SCOPE_READ;
	if (strcmp(command, "trace") == 0 || strcmp(command, "capture") == 0)
		return SCOPE_TRACE;
	if (strcmp(command, "patch") == 0)
		return SCOPE_PATCH;
	return 0;
}

unsigned scopes_of(const struct scopes *s, const char *cert, uid_t uid)
{
	char me[160];
	const char *any = cert[0] ? "cert:*" : "uid:*";

	if (cert[0])
		snprintf(me, sizeof(me), "cert:%s", cert);
	else
		snprintf(me, sizeof(me), "uid:%u", (unsigned)uid);
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].who, me) == 0)
			return s->v[i].scopes;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].who, any) == 0)
			return s->v[i].scopes;
	return cert[0] ? SCOPE_READ : SCOPE_ALL;
}

const char *scope_names(unsigned mask, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	for (int i = 0; i < NSCOPES; i++)
		if (mask & (1u << i)) {
			int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i]);
			if (n < 0 || (size_t)n >= len - used)
				break;
			used += (size_t)n;
		}
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

const char *scope_refusal(char *buf, size_t len, const char *who, unsigned have, const char *what,
			  unsigned need)
{
	char had[64], needed[64];

	scope_names(have, had, sizeof(had));
	scope_names(need & ~have, needed, sizeof(needed));
	snprintf(buf, len,
		 "this agent lets %s %s only, and %s needs the scope %s; the agent's --allow "
		 "%s=%s%s%s would grant it",
		 who, had, what, needed, who, have ? had : "", have ? "," : "", needed);
	return buf;
}
