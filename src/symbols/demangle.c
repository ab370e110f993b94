/*
 * Symbol demangling (see demangle.h). C++ (Itanium ABI) and Rust legacy
 * names go to libiberty's cplus_demangle, the demangler of binutils and
 * GDB, which tells them apart by itself (DMGL_AUTO) and bounds its own
 * recursion. Rust v0 names go to demangle-v0.c, because libiberty's v0
 * decoder does not bound its output.
 *
 * Written here, only for what libiberty does otherwise:
 * - A Rust legacy name's suffix (".cold", added by LLVM when it splits a
 *   function) is kept, as rustc-demangle keeps it; libiberty drops it.
 *   ".llvm.<hash>" only makes a name unique and is dropped.
 * - Names over MAX_INPUT bytes stay mangled: the demangler's time grows
 *   with them, and a target can put anything in its symbol table.
 */
#include "symbols/demangle.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle-v0.h"

#define MAX_INPUT     65536
#define RUST_HASH_LEN 16 /* legacy names end in 17h<16 hex digits>E */

int demangle_is_mangled(const char *name)
{
	return name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Where the suffix of a Rust legacy name starts (".cold"), or NULL. Its
 * identifiers may hold dots (".." stands for "::"), so the suffix is what
 * follows the hash. */
static const char *legacy_suffix(const char *name)
{
	for (const char *h = strstr(name, "17h"); h; h = strstr(h + 1, "17h")) {
		size_t i = 0;
		while (i < RUST_HASH_LEN && isxdigit((unsigned char)h[3 + i]))
			i++;
		if (i == RUST_HASH_LEN && h[3 + i] == 'E' && h[4 + i] == '.')
			return h + 4 + i;
	}
	return NULL;
}

static char *demangle_itanium(const char *name)
{
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

char *demangle_symbol(const char *name)
{
	if (!demangle_is_mangled(name) || strlen(name) > MAX_INPUT)
		return NULL;
	if (name[1] == 'R')
		return demangle_rust_v0(name);
	const char *suffix = legacy_suffix(name);
	if (!suffix)
		return demangle_itanium(name);
	char *base = strndup(name, (size_t)(suffix - name));
	char *d = base ? demangle_itanium(base) : NULL;
	free(base);
	if (!d || strncmp(suffix, ".llvm.", 6) == 0)
		return d;
	size_t n = strlen(d), m = strlen(suffix);
	char *r = realloc(d, n + m + 1);
	if (!r) {
		free(d);
		return NULL;
	}
	memcpy(r + n, suffix, m + 1);
	return r;
}

int demangle_is_fragment(const char *sym)
{
	return strstr(sym, ".cold") != NULL || strstr(sym, ".part.") != NULL;
}

/* Where the parameter list at the end of a demangled name opens, or 0:
 * the '(' matching the last ')', after which only qualifiers (const,
 * volatile, &, &&, noexcept) may follow. */
static size_t params_start(const char *d, size_t n)
{
	size_t close = n;

	while (close > 0 && d[close - 1] != ')')
		close--;
	if (close == 0)
		return 0;
	for (size_t i = close; i < n; i++)
		if (!islower((unsigned char)d[i]) && d[i] != ' ' && d[i] != '&')
			return 0;
	int depth = 0;
	for (size_t i = close; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0)
			return i;
	}
	return 0;
}

char *demangle_function(const char *sym)
{
	char *d = demangle_symbol(sym);

	if (!d)
		return strdup(sym);
	/* libiberty writes a clone's suffix as " [clone .constprop.0]", one
	 * bracket per suffix: keep them, as the symbol spells them. */
	char clones[256] = "";
	size_t n = strlen(d);
	for (char *c, *e; n && d[n - 1] == ']' && (c = strstr(d, " [clone ")) != NULL &&
			  (e = strchr(c + 8, ']')) != NULL;) {
		size_t len = (size_t)(e - (c + 8));
		if (strlen(clones) + len < sizeof(clones))
			strncat(clones, c + 8, len);
		memmove(c, e + 1, strlen(e + 1) + 1);
		n = strlen(d);
	}
	/* ABI tags ("make_key[abi:cxx11]") are nothing a person writes. */
	for (char *t, *e; (t = strstr(d, "[abi:")) != NULL && (e = strchr(t, ']')) != NULL;)
		memmove(t, e + 1, strlen(e + 1) + 1);
	n = strlen(d);
	size_t cut = params_start(d, n);
	if (cut)
		d[cut] = '\0';
	n = strlen(d);
	size_t nc = strlen(clones);
	char *r = malloc(n + nc + 1);
	if (r) {
		memcpy(r, d, n);
		memcpy(r + n, clones, nc + 1);
	}
	free(d);
	return r;
}
