/*
 * Naming the code at an address of a process (see frame-name.h). The
 * perf maps are kept in a small array searched linearly: a namer sees a
 * few processes that have one (JIT runtimes), and each lookup is cached
 * by its caller per address.
 */
#include "proc/frame-name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc-maps.h"
#include "symbols/perfmap.h"
#include "util/array.h"
#include "util/strpool.h"
#include "util/path.h"

/* The mapping where uprobes run a probed instruction out of line (a
 * sample there is in the probed function's first instruction). */
#define XOL_AREA "[uprobes]"

struct perfmap_slot {
	pid_t pid;
	struct perfmap *map; /* NULL: the process has none (or not its user's) */
	const char *group;   /* "[JIT: comm]", once named so */
};

struct frame_namer {
	struct symbolizer *sym;
	struct proc_registry *procs;
	struct perfmap_slot *maps;
	size_t nmaps, cap;
	size_t jit_dropped, jit_cut; /* what the perf maps' caps left out */
	struct strpool names;	     /* the groups' names */
};

struct frame_namer *frame_namer_new(struct symbolizer *sym, struct proc_registry *procs)
{
	struct frame_namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->sym = sym;
	n->procs = procs;
	strpool_init(&n->names);
	return n;
}

void frame_namer_free(struct frame_namer *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nmaps; i++)
		perfmap_free(n->maps[i].map);
	free(n->maps);
	strpool_release(&n->names);
	free(n);
}

/* The slot of pid, its perf map loaded on first use; NULL when out of
 * memory (not remembered: tried again next time). */
static struct perfmap_slot *slot_of(struct frame_namer *n, pid_t pid)
{
	for (size_t i = 0; i < n->nmaps; i++)
		if (n->maps[i].pid == pid)
			return &n->maps[i];
	struct perfmap_slot *s = array_reserve(n->maps, &n->cap, n->nmaps + 1, sizeof(*s));
	if (!s)
		return NULL;
	n->maps = s;
	s = &n->maps[n->nmaps++];
	s->pid = pid;
	s->group = NULL;
	if (perfmap_load(pid, procs_uid(n->procs, pid), NULL, &s->map) < 0)
		s->map = NULL;
	size_t dropped, cut;
	perfmap_losses(s->map, &dropped, &cut);
	n->jit_dropped += dropped;
	n->jit_cut += cut;
	return s;
}

/* Whether a mapping without an ELF file holds code a JIT made: anonymous
 * memory, named or not, or a memfd. */
static int jit_memory(const struct proc_map *m)
{
	return m->path && (strcmp(m->path, "//anon") == 0 || strncmp(m->path, "[anon", 5) == 0 ||
			   strncmp(m->path, "/memfd:", 7) == 0);
}

/* The one name of s's JIT code that its perf map does not name. */
static const char *jit_group(struct frame_namer *n, struct perfmap_slot *s)
{
	char buf[64];

	if (!s->group) {
		const char *comm = procs_comm(n->procs, s->pid);
		snprintf(buf, sizeof(buf), "[JIT: %s]", comm && comm[0] ? comm : "?");
		s->group = strpool_intern(&n->names, buf);
	}
	return s->group;
}

size_t frame_namer_jit_unnamed(const struct frame_namer *n, pid_t *pids, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; n && i < n->nmaps; i++)
		if (n->maps[i].group && k < max)
			pids[k++] = n->maps[i].pid;
	return k;
}

void frame_namer_jit_losses(const struct frame_namer *n, size_t *dropped, size_t *cut)
{
	*dropped = n ? n->jit_dropped : 0;
	*cut = n ? n->jit_cut : 0;
}

void frame_namer_forget(struct frame_namer *n, pid_t pid)
{
	for (size_t i = 0; i < n->nmaps; i++)
		if (n->maps[i].pid == pid) {
			perfmap_free(n->maps[i].map);
			n->maps[i] = n->maps[--n->nmaps];
			return;
		}
}

void frame_namer_user(struct frame_namer *n, pid_t pid, uint64_t addr, int nonleaf,
		      struct frame_name *out)
{
	const struct proc_map *m = procs_find(n->procs, pid, addr);

	out->kind = FRAME_UNKNOWN;
	out->map = m;
	out->offset = 0;
	out->jit_name = NULL;
	out->nframes = 0;
	if (!m)
		return;
	uint64_t look = nonleaf && addr > m->start ? addr - 1 : addr;
	out->offset = addr - m->start + m->pgoff;
	if (!m->file) {
		struct perfmap_slot *s = slot_of(n, pid);
		uint64_t start;
		out->jit_name = s && s->map ? perfmap_lookup(s->map, look, &start) : NULL;
		if (!out->jit_name && s && jit_memory(m))
			out->jit_name = jit_group(n, s);
		if (out->jit_name)
			out->kind = FRAME_JIT;
		else if (m->path && (m->path[0] == '/' || strcmp(m->path, "[vdso]") == 0 ||
				     strcmp(m->path, XOL_AREA) == 0))
			out->kind = FRAME_OFFSET;
		return;
	}
	out->nframes = frame_name_symbols(n->sym, m->file, look - m->start + m->pgoff, out->frames);
	out->kind = out->nframes > 0 ? FRAME_SYMBOL : FRAME_OFFSET;
}

int frame_name_symbols(struct symbolizer *s, struct sym_file *f, uint64_t off,
		       struct sym_frame out[FRAME_MAX_INLINE])
{
	struct sym_frame frames[FRAME_MAX_INLINE];
	uint64_t vaddr;
	int nf = 0, n = 0;

	if (sym_file_offset_to_vaddr(f, off, &vaddr) == 0)
		nf = symbolizer_lookup(s, f, vaddr, frames, FRAME_MAX_INLINE);
	if (nf <= 0 || !frames[0].function)
		return 0;
	for (int i = 0; i < nf; i++)
		if (frames[i].function)
			out[n++] = frames[i];
	return n;
}

void frame_name_format(const struct frame_name *f, char *buf, size_t len)
{
	switch (f->kind) {
	case FRAME_SYMBOL:
		snprintf(buf, len, "%s", f->frames[0].function);
		break;
	case FRAME_JIT:
		snprintf(buf, len, "%s", f->jit_name);
		break;
	case FRAME_OFFSET:
		/* The kernel's page of probed instructions stepped out of line:
		 * one name, whichever slot. */
		if (f->map->path && strcmp(f->map->path, XOL_AREA) == 0)
			snprintf(buf, len, "%s", XOL_AREA);
		else
			snprintf(buf, len, "%s+0x%llx",
				 path_base(f->map->path ? f->map->path : "?"),
				 (unsigned long long)f->offset);
		break;
	default:
		snprintf(buf, len, "[unknown]");
	}
}
