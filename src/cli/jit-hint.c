/*
 * What recce says of a JIT runtime's code (see jit-hint.h).
 */
#include "cli/jit-hint.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

static int is_node(const char *comm)
{
	return strcmp(comm, "node") == 0 || strcmp(comm, "nodejs") == 0 ||
	       strncmp(comm, "node ", 5) == 0;
}

int jit_hint_runtime(const char *comm)
{
	return is_node(comm) || strcmp(comm, "java") == 0 || strcmp(comm, "beam.smp") == 0;
}

const char *jit_hint_perf_map(const char *comm, pid_t pid, char *buf, size_t cap)
{
	if (is_node(comm))
		return "restart it with node --perf-basic-prof to see its functions";
	if (strcmp(comm, "java") == 0) {
		snprintf(buf, cap,
			 "record with --jit-map to ask it for one (jcmd %d Compiler.perfmap, JDK "
			 "17), without a restart",
			 (int)pid);
		return buf;
	}
	if (strcmp(comm, "beam.smp") == 0)
		return "start it with +JPperf true (Erlang/OTP 24 and later) to see its functions";
	if (strncmp(comm, "python3", 7) == 0)
		return "Python 3.12 and later write one when started with -X perf";
	return "the runtime can write a perf map (/tmp/perf-PID.map) that names it";
}

int jit_hint_name_matches(const char *pattern, const char *name)
{
	char bare[256];
	size_t n;

	if (fnmatch(pattern, name, 0) == 0)
		return 1;
	/* The BEAM: "$fib:fib/1", as "fib:fib/1" and "fib:fib". */
	snprintf(bare, sizeof(bare), "%s", name[0] == '$' ? name + 1 : name);
	if (fnmatch(pattern, bare, 0) == 0)
		return 1;
	char *arity = strrchr(bare, '/');
	if (arity && name[0] == '$') {
		*arity = '\0';
		if (fnmatch(pattern, bare, 0) == 0)
			return 1;
	}
	/* V8: "JS:*fib /app.js:1:23" (a tier's mark after the colon). */
	const char *colon = strchr(name, ':');
	if (colon && colon > name && strcspn(name, " ") > (size_t)(colon - name)) {
		const char *f = colon + 1;
		f += strspn(f, "*~^+");
		n = strcspn(f, " ");
		snprintf(bare, sizeof(bare), "%.*s", (int)(n < sizeof(bare) ? n : sizeof(bare) - 1),
			 f);
		if (bare[0] && fnmatch(pattern, bare, 0) == 0)
			return 1;
	}
	/* A JVM: "long Hot.fib(int)", as "Hot.fib". */
	const char *paren = strchr(name, '(');
	if (paren) {
		const char *start = paren;
		while (start > name && start[-1] != ' ')
			start--;
		n = (size_t)(paren - start);
		snprintf(bare, sizeof(bare), "%.*s", (int)(n < sizeof(bare) ? n : sizeof(bare) - 1),
			 start);
		if (bare[0] && fnmatch(pattern, bare, 0) == 0)
			return 1;
	}
	return 0;
}
