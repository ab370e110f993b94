/*
 * Pattern resolution for `recce trace` (see trace-pattern.h). Every
 * function symbol of every object is matched once per pattern with
 * fnmatch(3); the nearest-name search only runs for patterns that matched
 * nothing, so the common case stays one pass over the symbol tables.
 */
#include "trace/trace-pattern.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/ifunc.h"
#include "symbols/symbolize.h"
#include "symbols/usdt.h"
#include "util/array.h"
#include "util/path.h"

/* "0xHEX", or "0xHEX-0xHEX" as a report names a range (its start is the
 * function's): the start into *addr. Returns 1, or 0 for anything else. */
static int parse_address(const char *s, uint64_t *addr)
{
	char *end;

	if (strncmp(s, "0x", 2) != 0 || !isxdigit((unsigned char)s[2]))
		return 0;
	errno = 0;
	unsigned long long lo = strtoull(s + 2, &end, 16);
	if (errno)
		return 0;
	if (*end == '-') {
		if (strncmp(end + 1, "0x", 2) != 0 || !isxdigit((unsigned char)end[3]))
			return 0;
		unsigned long long hi = strtoull(end + 3, &end, 16);
		if (errno || hi <= lo)
			return 0;
	}
	if (*end)
		return 0;
	*addr = lo;
	return 1;
}

/* text without the spaces around it, in place. */
static char *trimmed(char *text)
{
	size_t n;

	while (*text == ' ')
		text++;
	for (n = strlen(text); n && text[n - 1] == ' '; n--)
		text[n - 1] = 0;
	return text;
}

/* The list "(NAME:TYPE, ...)" of a USDT pattern, from its '(' to the
 * end of the text, into *spec. Returns 0 or -EINVAL. */
static int parse_spec(const char *list, struct trace_usdt_spec *spec)
{
	static const char *const types[] = {"", "str", "int", "uint", "hex"};
	char buf[256], *save = NULL;
	size_t len = strlen(list);

	memset(spec, 0, sizeof(*spec));
	if (len < 2 || len >= sizeof(buf) || list[len - 1] != ')')
		return -EINVAL;
	memcpy(buf, list + 1, len - 2);
	buf[len - 2] = 0;
	/* strtok_r would merge ",,": an empty entry keeps its argument. */
	for (char *item = buf; item; item = save) {
		save = strchr(item, ',');
		if (save)
			*save++ = 0;
		if (spec->n >= (int)(sizeof(spec->a) / sizeof(spec->a[0])))
			return -EINVAL;
		char *colon = strchr(item, ':');
		if (colon)
			*colon = 0;
		const char *name = trimmed(item);
		size_t nlen = strlen(name);
		if (nlen >= sizeof(spec->a[0].name) || (nlen && isdigit((unsigned char)name[0])))
			return -EINVAL;
		for (size_t i = 0; i < nlen; i++)
			if (!isalnum((unsigned char)name[i]) && name[i] != '_')
				return -EINVAL;
		memcpy(spec->a[spec->n].name, name, nlen + 1);
		if (colon) {
			const char *type = trimmed(colon + 1);
			int k = (int)(sizeof(types) / sizeof(types[0]));
			while (--k > 0 && strcmp(types[k], type) != 0)
				;
			if (k <= 0)
				return -EINVAL;
			spec->a[spec->n].type = k;
		}
		spec->n++;
	}
	return 0;
}

/* "usdt:[OBJECT:]PROVIDER:NAME[(ARGS)]" after its "usdt:", into *p. */
static int parse_usdt(const char *whole, struct trace_pattern *p)
{
	char text[512];
	const char *paren = strchr(whole, '(');

	p->kind = TRACE_PATTERN_USDT;
	if (paren && parse_spec(paren, &p->spec) < 0)
		return -EINVAL;
	size_t len = paren ? (size_t)(paren - whole) : strlen(whole);
	if (len >= sizeof(text))
		return -EINVAL;
	memcpy(text, whole, len);
	text[len] = 0;
	const char *c1 = strchr(text, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (!c1 || (c2 && strchr(c2 + 1, ':')))
		return -EINVAL;
	const char *prov = c2 ? c1 + 1 : text, *name = c2 ? c2 + 1 : c1 + 1;
	if (c2 && c1 == text)
		return -EINVAL;
	if (!*name || name - 1 == prov)
		return -EINVAL;
	p->object = c2 ? strndup(text, (size_t)(c1 - text)) : NULL;
	p->provider = strndup(prov, (size_t)(name - 1 - prov));
	p->function = strdup(name);
	if ((c2 && !p->object) || !p->provider || !p->function) {
		trace_pattern_release(p);
		return -ENOMEM;
	}
	return 0;
}

int trace_pattern_parse(const char *text, struct trace_pattern *p)
{
	const char *colon = strchr(text, ':');
	const char *bang = strchr(text, '!');

	memset(p, 0, sizeof(*p));
	if (strncmp(text, "usdt:", 5) == 0)
		return parse_usdt(text + 5, p);
	if (strncmp(text, "py:", 3) == 0) {
		p->kind = TRACE_PATTERN_PY;
		if (!text[3] || strchr(text + 3, ':'))
			return -EINVAL;
		p->function = strdup(text + 3);
		return p->function ? 0 : -ENOMEM;
	}
	/* "memcached!0xcf20-0xdfd3", copied from a report. */
	if (!colon && bang && bang != text && parse_address(bang + 1, &p->addr)) {
		p->object = strndup(text, (size_t)(bang - text));
		p->function = strdup(bang + 1);
		p->addressed = 1;
		if (!p->object || !p->function) {
			trace_pattern_release(p);
			return -ENOMEM;
		}
		return 0;
	}
	/* "ns::f" and "a::b::c" have no object part. */
	while (colon && colon[1] == ':')
		colon = NULL;
	if (colon) {
		if (colon == text || !colon[1])
			return -EINVAL;
		p->object = strndup(text, (size_t)(colon - text));
		p->function = strdup(colon + 1);
	} else {
		if (!*text)
			return -EINVAL;
		p->function = strdup(text);
	}
	if (!p->function || (colon && !p->object)) {
		trace_pattern_release(p);
		return -ENOMEM;
	}
	p->addressed = parse_address(p->function, &p->addr);
	if (p->addressed && !p->object) {
		/* Every object has an address 0x1000: say which. */
		trace_pattern_release(p);
		return -EINVAL;
	}
	return 0;
}

void trace_pattern_release(struct trace_pattern *p)
{
	free(p->object);
	free(p->provider);
	free(p->function);
	p->object = p->provider = p->function = NULL;
}

/* The length of a library name's stem: the name before ".so" (at its end
 * or before a '.'), less a version after a '-': "libdw" of "libdw.so.1",
 * "libdw-0.188.so" and "libdw"; "libc" of "libc-2.31.so". */
static size_t lib_stem(const char *name)
{
	size_t n = strlen(name);
	for (const char *so = strstr(name, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || so[3] == '.') {
			n = (size_t)(so - name);
			break;
		}
	size_t v = n;
	while (v > 0 && (isdigit((unsigned char)name[v - 1]) || name[v - 1] == '.'))
		v--;
	if (v < n && v > 1 && name[v - 1] == '-' && isdigit((unsigned char)name[v]))
		n = v - 1;
	return n;
}

int trace_pattern_match_object(const struct trace_pattern *p, const char *path)
{
	if (!p->object)
		return 1;
	const char *base = path_base(path);
	if (fnmatch(p->object, base, 0) == 0 || fnmatch(p->object, path, FNM_PATHNAME) == 0)
		return 1;
	/* "libc" names "libc.so.6", "ratchet" names "ratchet". */
	size_t n = strlen(p->object);
	if (strncmp(p->object, base, n) == 0 && base[n] == '.')
		return 1;
	/* A library by its stem, whatever version its file carries: "libc"
	 * and "libc.so.6" name glibc 2.31's "libc-2.31.so", "libdw.so.1"
	 * names "libdw-0.188.so" (the file its soname links to). */
	if (strpbrk(p->object, "*?[/") || !strstr(base, ".so"))
		return 0;
	size_t ps = lib_stem(p->object), bs = lib_stem(base);
	return ps > 0 && ps == bs && strncmp(p->object, base, ps) == 0;
}

/* Whether p names obj by either of its paths. */
static int object_named(const struct trace_pattern *p, const struct trace_object *obj)
{
	return trace_pattern_match_object(p, obj->path) ||
	       (obj->real_path && trace_pattern_match_object(p, obj->real_path));
}

size_t trace_edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[257];

	if (la > 256 || lb > 256)
		return cap;
	if ((la > lb ? la - lb : lb - la) >= cap)
		return cap;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], best = row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t v = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best >= cap)
			return cap;
	}
	return row[lb] < cap ? row[lb] : cap;
}

struct walk {
	const struct trace_pattern *pats;
	size_t npat;
	const struct trace_object *obj;
	int obj_go; /* obj was built by Go's toolchain */
	struct trace_resolved *out;
	size_t max;
	int err;
	/* nearest-name search */
	const char *want;
	size_t best[TRACE_NEAREST];
	char **near;
};

static int add_fn(struct walk *w, const char *symbol, const char *name, uint64_t vaddr,
		  uint64_t size, int pattern)
{
	struct trace_resolved *r = w->out;

	/* An IFUNC's code is a resolver the loader runs once: the calls go to
	 * the implementation it chose, which is what to probe. */
	const char *impl = NULL;
	if (symbolizer_is_ifunc(w->obj->file, vaddr)) {
		uint64_t at, impl_size = 0;
		impl = "";
		if (ifunc_resolve_here(w->obj->path, symbol, &at) == 0 &&
		    (impl = symbolizer_function_at(w->obj->file, at, &impl_size)) != NULL)
			vaddr = at, size = impl_size;
		else
			impl = "";
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->fns[i].file == w->obj->file && r->fns[i].vaddr == vaddr)
			return 0; /* an alias of a function already chosen */
	r->total++;
	if (r->n >= w->max)
		return -E2BIG; /* counted, not kept: the caller refuses */
	struct trace_fn *fns = array_reserve(r->fns, &r->cap, r->n + 1, sizeof(*fns));
	if (!fns)
		return -ENOMEM;
	r->fns = fns;
	struct trace_fn *f = &r->fns[r->n];
	memset(f, 0, sizeof(*f));
	f->file = w->obj->file;
	f->vaddr = vaddr;
	f->size = size;
	f->go = w->obj_go;
	f->pattern = pattern;
	f->name = strdup(name);
	f->symbol = strdup(symbol);
	f->path = strdup(w->obj->path);
	f->object = strdup(path_base(w->obj->path));
	f->ifunc = impl ? strdup(impl) : NULL;
	if (!f->name || !f->symbol || !f->path || !f->object || (impl && !f->ifunc) ||
	    sym_file_vaddr_to_offset(w->obj->file, vaddr, &f->offset) < 0) {
		int err = f->name && f->symbol && f->path && f->object && (!impl || f->ifunc)
			      ? 0
			      : -ENOMEM;
		free(f->name);
		free(f->symbol);
		free(f->path);
		free(f->object);
		free(f->ifunc);
		return err; /* a symbol outside every segment cannot be probed */
	}
	r->n++;
	return 0;
}

/* The name without a compiler clone's suffix (".constprop.0", ".isra.0",
 * ".lto_priv.0"), into buf: a clone is found under its function's name. */
static const char *clone_base(const char *name, char *buf, size_t cap)
{
	static const char *const suffixes[] = {".constprop.", ".isra.", ".lto_priv."};
	size_t cut = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		const char *at = strstr(name, suffixes[i]);
		if (at && (size_t)(at - name) < cut)
			cut = (size_t)(at - name);
	}
	if (cut >= cap)
		return name;
	memcpy(buf, name, cut);
	buf[cut] = '\0';
	return buf;
}

/* The last component of a qualified name ("fill_map" of "shop::fill_map"),
 * or NULL for a name without "::". */
static const char *last_component(const char *name)
{
	const char *tail = NULL;

	for (const char *c = strstr(name, "::"); c; c = strstr(c + 2, "::"))
		tail = c + 2;
	return tail;
}

/* A Go name without its package path's directories ("promql.(*Engine).exec"
 * of "github.com/prometheus/prometheus/promql.(*Engine).exec", as Go's
 * short names and people write it), or NULL for a name without them. Only
 * a '/' before the first '(' or '[' is the path's: a generic's type
 * arguments name packages of their own. */
static const char *package_tail(const char *name)
{
	const char *tail = NULL;

	for (const char *c = name; *c && *c != '(' && *c != '['; c++)
		if (*c == '/')
			tail = c + 1;
	return tail && *tail ? tail : NULL;
}

/* Whether pattern p names the symbol sym, whose name as people write it
 * is display: by the symbol, that name, or that name without a clone's
 * suffix; for a pattern without "::", by the name's last component, as
 * gdb's `break fill_map` finds shop::fill_map; and for one without '/',
 * by a Go name without its package's directories. */
static int names(const struct trace_pattern *p, const char *sym, const char *display)
{
	char base[1024];
	const char *b = clone_base(display, base, sizeof(base)), *tail;

	if (fnmatch(p->function, sym, 0) == 0 || fnmatch(p->function, display, 0) == 0 ||
	    fnmatch(p->function, b, 0) == 0)
		return 1;
	tail = strchr(p->function, '/') ? NULL : package_tail(b);
	if (tail && fnmatch(p->function, tail, 0) == 0)
		return 1;
	tail = strstr(p->function, "::") ? NULL : last_component(b);
	return tail && fnmatch(p->function, tail, 0) == 0;
}

static int match_cb(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct walk *w = ctx;
	int err = 0;

	/* A split-off fragment is no function a caller calls. */
	if (demangle_is_fragment(name))
		return 0;
	char *display = demangle_function(name);
	if (!display)
		return -ENOMEM;
	for (size_t p = 0; p < w->npat; p++) {
		if (w->pats[p].kind != TRACE_PATTERN_FUNCTION || w->pats[p].addressed ||
		    !object_named(&w->pats[p], w->obj) ||
		    !names(&w->pats[p], name, display))
			continue;
		w->out->matched[p]++;
		err = add_fn(w, name, display, vaddr, size, (int)p);
		if (err == -E2BIG) {
			w->err = err;
			err = 0;
			continue; /* keep counting */
		}
		break;
	}
	free(display);
	return err;
}

/* How far the name a person wants is from display: the edit distance to
 * the whole name, or, one more, to its last component ("fill_map" is near
 * "shop::fill_map") or to a Go name without its package's directories
 * ("promql.(*Engine).Exec" is near ".../promql.(*Engine).exec"). */
static size_t name_distance(const char *want, const char *display, size_t cap)
{
	size_t d = trace_edit_distance(want, display, cap);
	const char *tails[2] = {
	    strstr(want, "::") ? NULL : last_component(display),
	    strchr(want, '/') ? NULL : package_tail(display),
	};

	for (size_t i = 0; i < 2; i++)
		if (tails[i]) {
			size_t t = trace_edit_distance(want, tails[i], cap) + 1;
			if (t < d)
				d = t;
		}
	return d;
}

/* Keeps name (allocated), d away from the wanted name, among the
 * nearest in distance order, dropping the farthest: 1, or 0 when it is
 * no nearer than them or already there (name not taken). */
static int near_keep(struct walk *w, size_t d, char *name)
{
	int seen = d >= w->best[TRACE_NEAREST - 1];

	for (size_t i = 0; i < TRACE_NEAREST && !seen; i++)
		seen = w->near[i] && strcmp(w->near[i], name) == 0;
	if (seen)
		return 0;
	size_t at = TRACE_NEAREST - 1;
	free(w->near[at]);
	while (at > 0 && w->best[at - 1] > d) {
		w->best[at] = w->best[at - 1];
		w->near[at] = w->near[at - 1];
		at--;
	}
	w->best[at] = d;
	w->near[at] = name;
	return 1;
}

static int near_cb(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct walk *w = ctx;

	if (demangle_is_fragment(name))
		return 0;
	char *display = demangle_function(name);
	if (!display)
		return -ENOMEM;
	size_t d = name_distance(w->want, display, w->best[TRACE_NEAREST - 1]);
	if (!near_keep(w, d, display))
		free(display);
	return 0;
}

/*
 * Pattern p, an address, in the object w->obj: the function starting
 * there, named by its symbol or, with none, by the address as written
 * ("0xcf20"), sized by its symbol or .eh_frame entry. An address inside
 * a function offers that function's start as the nearest name.
 */
static int resolve_address(struct walk *w, size_t p)
{
	const struct trace_pattern *pat = &w->pats[p];
	uint64_t size = 0, lo, hi;
	const char *sym = symbolizer_function_at(w->obj->file, pat->addr, &size);
	int rc = symbolizer_function_range(w->obj->file, pat->addr, &lo, &hi);
	char buf[64];

	if (rc < 0)
		return rc;
	if (!sym && rc > 0 && lo == pat->addr) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, lo);
		sym = buf;
		size = hi - lo;
	}
	if (sym) {
		char *display = demangle_function(sym);
		if (!display)
			return -ENOMEM;
		w->out->matched[p]++;
		int err = add_fn(w, sym, display, pat->addr, size, (int)p);
		free(display);
		if (err == -E2BIG)
			w->err = err;
		return err == -E2BIG ? 0 : err;
	}
	if (rc > 0 && !w->out->nearest[p][0]) {
		snprintf(buf, sizeof(buf), "%s:0x%" PRIx64, path_base(w->obj->path), lo);
		if (!(w->out->nearest[p][0] = strdup(buf)))
			return -ENOMEM;
	}
	return 0;
}

/* Whether USDT probe u is one pattern p names: a usdt: pattern by its
 * globs, a py: pattern by being a Python function's entry or return. */
static int usdt_named(const struct trace_pattern *p, const struct usdt_probe *u, int *py)
{
	*py = TRACE_PY_NONE;
	if (p->kind == TRACE_PATTERN_USDT)
		return fnmatch(p->provider, u->provider, 0) == 0 &&
		       fnmatch(p->function, u->name, 0) == 0;
	if (p->kind != TRACE_PATTERN_PY || strcmp(u->provider, "python") != 0)
		return 0;
	if (strcmp(u->name, "function__entry") == 0)
		*py = TRACE_PY_ENTRY;
	else if (strcmp(u->name, "function__return") == 0)
		*py = TRACE_PY_RETURN;
	return *py != TRACE_PY_NONE;
}

/* For the py: pattern p, which found the Python of w->obj: a probe
 * that holds its `line` semaphore up (TRACE_PY_TRACING), on the site of
 * another probe of the Python provider with a semaphore of its own. */
static int add_tracing(struct walk *w, const struct usdt_probe *probes, size_t n, int p)
{
	const struct usdt_probe *line = NULL, *site = NULL;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(probes[i].provider, "python") != 0 || !probes[i].sema_offset)
			continue;
		if (strcmp(probes[i].name, "line") == 0)
			line = &probes[i];
		else if (!site && strcmp(probes[i].name, "function__entry") != 0 &&
			 strcmp(probes[i].name, "function__return") != 0)
			site = &probes[i];
	}
	if (!line || !site)
		return 0;
	size_t before = w->out->n;
	int err = add_fn(w, "python:line", "python:line", site->vaddr, 0, p);
	if (err || w->out->n == before)
		return err == -E2BIG ? 0 : err;
	struct trace_fn *f = &w->out->fns[before];
	f->py = TRACE_PY_TRACING;
	if (!(f->usdt = calloc(1, sizeof(*f->usdt))))
		return -ENOMEM;
	*f->usdt = *site;
	f->usdt->nargs = 0;
	f->usdt->sema_vaddr = line->sema_vaddr;
	f->usdt->sema_offset = line->sema_offset;
	return 0;
}

/* The USDT probes of w->obj that usdt: and py: patterns name, each
 * once; a probe a py: pattern names is a Python call's, whatever else
 * names it too. */
static int resolve_usdt(struct walk *w, const struct usdt_probe *probes, size_t n)
{
	char name[256];
	int python = -1; /* a pattern that found this object's function probes */

	for (size_t i = 0; i < n; i++) {
		int first = -1, py = TRACE_PY_NONE;
		for (size_t p = 0; p < w->npat; p++) {
			int is_py;
			if (!usdt_named(&w->pats[p], &probes[i], &is_py) ||
			    !object_named(&w->pats[p], w->obj))
				continue;
			w->out->matched[p]++;
			first = first < 0 ? (int)p : first;
			py = is_py ? is_py : py;
		}
		if (first < 0)
			continue;
		snprintf(name, sizeof(name), "%s:%s", probes[i].provider, probes[i].name);
		size_t before = w->out->n;
		int err = add_fn(w, name, name, probes[i].vaddr, 0, first);
		if (err == -E2BIG) {
			w->err = err;
			continue;
		}
		if (err)
			return err;
		if (w->out->n == before)
			continue; /* at the address of one already chosen */
		struct trace_fn *f = &w->out->fns[before];
		f->py = py;
		f->go = 0;
		if (!(f->usdt = malloc(sizeof(*f->usdt))))
			return -ENOMEM;
		*f->usdt = probes[i];
		/* A usdt: pattern on them needs line tracing on just as much. */
		if (strcmp(probes[i].provider, "python") == 0 &&
		    strncmp(probes[i].name, "function__", 10) == 0)
			python = first;
	}
	return python >= 0 ? add_tracing(w, probes, n, python) : 0;
}

/* For a USDT pattern that matched nothing: the probes of the objects it
 * names nearest to it, as "provider:name". */
static int near_usdt(struct walk *w, const struct trace_pattern *p, const struct usdt_probe *probes,
		     size_t n)
{
	char want[256], name[256];

	snprintf(want, sizeof(want), "%s:%s", p->provider, p->function);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%s", probes[i].provider, probes[i].name);
		size_t d = trace_edit_distance(want, name, w->best[TRACE_NEAREST - 1]);
		char *copy = d < w->best[TRACE_NEAREST - 1] ? strdup(name) : NULL;
		if (d < w->best[TRACE_NEAREST - 1] && !copy)
			return -ENOMEM;
		if (copy && !near_keep(w, d, copy))
			free(copy);
	}
	return 0;
}

/* Whether any pattern is a usdt: or py: one. */
static int wants_usdt(const struct trace_pattern *pats, size_t npat)
{
	for (size_t p = 0; p < npat; p++)
		if (pats[p].kind != TRACE_PATTERN_FUNCTION)
			return 1;
	return 0;
}

int trace_resolve(struct symbolizer *s, const struct trace_pattern *pats, size_t npat,
		  const struct trace_object *objs, size_t nobj, size_t max,
		  struct trace_resolved *out)
{
	struct walk w = {pats, npat, NULL, 0, out, max, 0, NULL, {0}, NULL};
	int missing = 0;

	memset(out, 0, sizeof(*out));
	out->matched = calloc(npat ? npat : 1, sizeof(*out->matched));
	out->nearest = calloc(npat ? npat : 1, sizeof(*out->nearest));
	out->unnamed = calloc(npat ? npat : 1, sizeof(*out->unnamed));
	if (!out->matched || !out->nearest || !out->unnamed)
		return -ENOMEM;
	for (size_t o = 0; o < nobj; o++) {
		w.obj = &objs[o];
		w.obj_go = sym_file_is_go(objs[o].file);
		int err = symbolizer_foreach_function(s, objs[o].file, match_cb, &w);
		for (size_t p = 0; p < npat && !err; p++)
			if (pats[p].addressed && object_named(&pats[p], w.obj))
				err = resolve_address(&w, p);
		if (!err && wants_usdt(pats, npat)) {
			struct usdt_probe *probes;
			ssize_t n = usdt_probes(objs[o].file, &probes);
			err = n < 0 ? (int)n : resolve_usdt(&w, probes, (size_t)n);
			free(probes);
		}
		if (err)
			return err;
	}
	if (w.err)
		return w.err;
	for (size_t p = 0; p < npat; p++) {
		if (out->matched[p])
			continue;
		missing = 1;
		if (pats[p].addressed || pats[p].kind == TRACE_PATTERN_PY)
			continue; /* its nearest is the start of what holds it; a
				   * Python without probes is said by the caller */
		w.want = pats[p].function;
		w.near = out->nearest[p];
		for (size_t i = 0; i < TRACE_NEAREST; i++)
			w.best[i] = strlen(w.want) / 2 + 3; /* farther is not "near" */
		if (pats[p].kind == TRACE_PATTERN_USDT)
			for (size_t i = 0; i < TRACE_NEAREST; i++)
				w.best[i] += strlen(pats[p].provider) / 2 + 1;
		for (size_t o = 0; o < nobj; o++) {
			if (!object_named(&pats[p], &objs[o]))
				continue;
			w.obj = &objs[o];
			int err;
			if (pats[p].kind == TRACE_PATTERN_USDT) {
				struct usdt_probe *probes;
				ssize_t n = usdt_probes(objs[o].file, &probes);
				err = n < 0 ? (int)n : near_usdt(&w, &pats[p], probes, (size_t)n);
				free(probes);
			} else {
				err = symbolizer_foreach_function(s, objs[o].file, near_cb, &w);
				if (!err && !out->unnamed[p] && !sym_file_names_all(objs[o].file) &&
				    !(out->unnamed[p] = strdup(objs[o].path)))
					err = -ENOMEM;
			}
			if (err)
				return err;
		}
		/* A name one or two edits away is most likely the one meant:
		 * a stripped object is no reason then. */
		if (out->unnamed[p] && out->nearest[p][0] && w.best[0] <= 2) {
			free(out->unnamed[p]);
			out->unnamed[p] = NULL;
		}
	}
	return missing ? -ENOENT : 0;
}

void trace_resolved_release(struct trace_resolved *r, size_t npat)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->fns[i].name);
		free(r->fns[i].symbol);
		free(r->fns[i].path);
		free(r->fns[i].object);
		free(r->fns[i].ifunc);
		free(r->fns[i].usdt);
	}
	free(r->fns);
	if (r->nearest)
		for (size_t p = 0; p < npat; p++)
			for (size_t i = 0; i < TRACE_NEAREST; i++)
				free(r->nearest[p][i]);
	free(r->nearest);
	if (r->unnamed)
		for (size_t p = 0; p < npat; p++)
			free(r->unnamed[p]);
	free(r->unnamed);
	free(r->matched);
	memset(r, 0, sizeof(*r));
}
