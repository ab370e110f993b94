/*
 * Pattern resolution for `recce trace` (see trace-pattern.h). Every
 * function symbol of every object is matched once per pattern with
 * fnmatch(3); the nearest-name search only runs for patterns that matched
 * nothing, so the common case stays one pass over the symbol tables.
 */
#include "trace/trace-pattern.h"

#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/path.h"

int trace_pattern_parse(const char *text, struct trace_pattern *p)
{
	const char *colon = strchr(text, ':');

	memset(p, 0, sizeof(*p));
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
	return 0;
}

void trace_pattern_release(struct trace_pattern *p)
{
	free(p->object);
	free(p->function);
	p->object = p->function = NULL;
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
	return strncmp(p->object, base, n) == 0 && base[n] == '.';
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

int trace_vaddr_to_offset(int fd, uint64_t vaddr, uint64_t *offset)
{
	int err = -ENOENT;
	size_t n;

	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOENT;
	if (elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
				*offset = vaddr - ph.p_vaddr + ph.p_offset;
				err = 0;
				break;
			}
		}
	}
	elf_end(elf);
	return err;
}

struct walk {
	const struct trace_pattern *pats;
	size_t npat;
	const struct trace_object *obj;
	struct trace_resolved *out;
	size_t max;
	int err;
	/* nearest-name search */
	const char *want;
	size_t best[TRACE_NEAREST];
	char **near;
};

static int add_fn(struct walk *w, const char *name, uint64_t vaddr, int pattern)
{
	struct trace_resolved *r = w->out;

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
	f->pattern = pattern;
	f->name = strdup(name);
	f->path = strdup(w->obj->path);
	f->object = strdup(path_base(w->obj->path));
	if (!f->name || !f->path || !f->object ||
	    trace_vaddr_to_offset(sym_file_fd(w->obj->file), vaddr, &f->offset) < 0) {
		int err = f->name && f->path && f->object ? 0 : -ENOMEM;
		free(f->name);
		free(f->path);
		free(f->object);
		return err; /* a symbol outside every segment cannot be probed */
	}
	r->n++;
	return 0;
}

static int match_cb(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct walk *w = ctx;

	for (size_t p = 0; p < w->npat; p++) {
		if (!trace_pattern_match_object(&w->pats[p], w->obj->path) ||
		    fnmatch(w->pats[p].function, name, 0) != 0)
			continue;
		w->out->matched[p]++;
		int err = add_fn(w, name, vaddr, (int)p);
		if (err == -E2BIG) {
			w->err = err;
			continue; /* keep counting */
		}
		if (err)
			return err;
		break;
	}
	return 0;
}

static int near_cb(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct walk *w = ctx;
	size_t d = trace_edit_distance(w->want, name, w->best[TRACE_NEAREST - 1]);

	if (d >= w->best[TRACE_NEAREST - 1])
		return 0;
	for (size_t i = 0; i < TRACE_NEAREST; i++)
		if (w->near[i] && strcmp(w->near[i], name) == 0)
			return 0;
	/* Insert in distance order, dropping the farthest. */
	size_t at = TRACE_NEAREST - 1;
	free(w->near[at]);
	while (at > 0 && w->best[at - 1] > d) {
		w->best[at] = w->best[at - 1];
		w->near[at] = w->near[at - 1];
		at--;
	}
	w->best[at] = d;
	w->near[at] = strdup(name);
	return w->near[at] ? 0 : -ENOMEM;
}

int trace_resolve(struct symbolizer *s, const struct trace_pattern *pats, size_t npat,
		  const struct trace_object *objs, size_t nobj, size_t max,
		  struct trace_resolved *out)
{
	struct walk w = {pats, npat, NULL, out, max, 0, NULL, {0}, NULL};
	int missing = 0;

	memset(out, 0, sizeof(*out));
	out->matched = calloc(npat ? npat : 1, sizeof(*out->matched));
	out->nearest = calloc(npat ? npat : 1, sizeof(*out->nearest));
	if (!out->matched || !out->nearest)
		return -ENOMEM;
	for (size_t o = 0; o < nobj; o++) {
		w.obj = &objs[o];
		int err = symbolizer_foreach_function(s, objs[o].file, match_cb, &w);
		if (err)
			return err;
	}
	if (w.err)
		return w.err;
	for (size_t p = 0; p < npat; p++) {
		if (out->matched[p])
			continue;
		missing = 1;
		w.want = pats[p].function;
		w.near = out->nearest[p];
		for (size_t i = 0; i < TRACE_NEAREST; i++)
			w.best[i] = strlen(w.want) / 2 + 3; /* farther is not "near" */
		for (size_t o = 0; o < nobj; o++) {
			if (!trace_pattern_match_object(&pats[p], objs[o].path))
				continue;
			w.obj = &objs[o];
			int err = symbolizer_foreach_function(s, objs[o].file, near_cb, &w);
			if (err)
				return err;
		}
	}
	return missing ? -ENOENT : 0;
}

void trace_resolved_release(struct trace_resolved *r, size_t npat)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->fns[i].name);
		free(r->fns[i].path);
		free(r->fns[i].object);
	}
	free(r->fns);
	if (r->nearest)
		for (size_t p = 0; p < npat; p++)
			for (size_t i = 0; i < TRACE_NEAREST; i++)
				free(r->nearest[p][i]);
	free(r->nearest);
	free(r->matched);
	memset(r, 0, sizeof(*r));
}
