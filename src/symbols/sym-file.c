/*
 * What an opened file is (see symbolize.h's sym_file_*()): its path,
 * build id and ELF type, its sections, where its source is, whether it
 * is Go or has debug information, and how its file offsets and virtual
 * addresses map through its load segments. Opening and lookups are in
 * symbolize.c.
 */
#include "symbols/symbolize.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/sym-cache.h"
#include "symbols/sym-file.h"
#include "util/hash.h"

const char *sym_file_path(const struct sym_file *f)
{
	return f->path;
}

const char *sym_file_build_id(const struct sym_file *f)
{
	return f->build_id;
}

int sym_file_fd(const struct sym_file *f)
{
	return f->fd;
}

int sym_file_elf_type(const struct sym_file *f)
{
	return f->elf_type;
}

int sym_file_load_dwarf(struct sym_file *f)
{
	if (f->dwarf_state == 0) {
		Dwarf_Addr bias;
		f->dwarf_state = dwfl_module_getdwarf(f->mod, &bias) ? 1 : -1;
	}
	return f->dwarf_state > 0;
}

/* The section after scn (the first for NULL) of f's ELF file, its header
 * into *sh (zeroes if unreadable) and its name into *name ("" if none);
 * NULL after the last, or when f has no ELF at hand. */
static Elf_Scn *next_section(const struct sym_file *f, Elf_Scn *scn, GElf_Shdr *sh,
			     const char **name)
{
	GElf_Addr bias;
	Elf *elf = f->mod ? dwfl_module_getelf(f->mod, &bias) : NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 || !(scn = elf_nextscn(elf, scn)))
		return NULL;
	const char *n = NULL;
	if (gelf_getshdr(scn, sh))
		n = elf_strptr(elf, shstrndx, sh->sh_name);
	else
		memset(sh, 0, sizeof(*sh));
	*name = n ? n : "";
	return scn;
}

Elf_Scn *sym_file_find_section(const struct sym_file *f, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *n;

	while ((scn = next_section(f, scn, sh, &n)) != NULL)
		if (strcmp(n, name) == 0)
			return scn;
	return NULL;
}

int sym_file_read_vaddr(void *arg, uint64_t vaddr, void *buf, size_t n)
{
	const struct sym_file *f = arg;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	while ((scn = next_section(f, scn, &sh, &name)) != NULL) {
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr > sh.sh_size || sh.sh_size - (vaddr - sh.sh_addr) < n)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return -ENOENT;
		memcpy(buf, (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr), n);
		return 0;
	}
	return -ENOENT;
}

uint64_t sym_file_source(struct sym_file *f, uint32_t *owner)
{
	struct stat st;

	/* The whole file's bytes, once: a file that only claims another's
	 * build-id, whatever else it copies of it, is another source. */
	if (!f->source_done) {
		uint64_t h = hash_fnv1a_value(HASH_FNV1A_INIT, (uint64_t)f->size);
		size_t cap = 1 << 17;
		uint64_t *buf = malloc(cap);
		off_t at = 0;
		ssize_t n = -1;
		f->source_owner =
		    f->fd >= 0 && fstat(f->fd, &st) == 0 ? (uint32_t)st.st_uid : UINT32_MAX;
		/* Four lanes, so that the multiplies overlap: a hundred
		 * megabytes in a few tens of milliseconds. */
		uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3};
		while (buf && f->fd >= 0 && (n = pread(f->fd, buf, cap, at)) > 0) {
			size_t words = (size_t)n / 8, i = 0;
			for (; i + 4 <= words; i += 4)
				for (int k = 0; k < 4; k++)
					lane[k] = hash_fnv1a_value(lane[k], buf[i + (size_t)k]);
			for (; i < words; i++)
				lane[0] = hash_fnv1a_value(lane[0], buf[i]);
			lane[1] =
			    hash_fnv1a_bytes(lane[1], (const char *)buf + words * 8, (size_t)n % 8);
			at += n;
		}
		free(buf);
		for (int k = 0; k < 4; k++)
			h = hash_fnv1a_value(h, lane[k]);
		/* A file that does not read whole matches no table. */
		f->source = n == 0 ? (h ? h : 1) : 0;
		f->source_done = 1;
	}
	if (owner)
		*owner = f->source_owner;
	return f->source;
}

int sym_file_is_go(const struct sym_file *f)
{
	GElf_Shdr sh;

	return sym_file_find_section(f, ".go.buildinfo", &sh) ||
	       sym_file_find_section(f, ".note.go.buildid", &sh);
}

int sym_file_names_all(const struct sym_file *f)
{
	GElf_Shdr sh;

	return sym_file_find_section(f, ".symtab", &sh) ||
	       sym_file_find_section(f, ".gnu_debugdata", &sh) || sym_file_is_go(f) ||
	       sym_file_has_debuginfo(f);
}

int sym_file_has_debuginfo(const struct sym_file *f)
{
	/* A table says without reading any DWARF. */
	if (f->cache)
		return sym_cache_has_dwarf(f->cache);
	/* Loading is a cache fill, not a visible change: the const in the
	 * API promises the latter. */
	return sym_file_load_dwarf((struct sym_file *)f);
}

int sym_file_offset_to_vaddr(const struct sym_file *f, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];
		if (offset >= g->offset && offset - g->offset < g->filesz) {
			*vaddr = g->vaddr + (offset - g->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int sym_file_map_vaddr(const struct sym_file *f, uint64_t pgoff, uint64_t len, int exec,
		       uint64_t *vaddr)
{
	const struct load_seg *best = NULL;
	int best_score = -1;

	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];
		if (g->offset >= pgoff + len || g->offset + g->filesz <= pgoff ||
		    g->vaddr + pgoff < g->offset)
			continue;
		int score = !(g->flags & PF_X) == !exec;
		if (score > best_score) {
			best = g;
			best_score = score;
		}
	}
	if (!best)
		return -ENOENT;
	*vaddr = best->vaddr + pgoff - best->offset;
	return 0;
}

int sym_file_segment_end(const struct sym_file *f, uint64_t lo, uint64_t hi, uint64_t *end)
{
	int found = 0;

	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];
		uint64_t e = g->offset + g->filesz;
		if (g->offset < hi && e > lo && (!found || e > *end)) {
			*end = e;
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

int sym_file_vaddr_to_offset(const struct sym_file *f, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];
		if (vaddr >= g->vaddr && vaddr - g->vaddr < g->filesz) {
			*offset = g->offset + (vaddr - g->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}
