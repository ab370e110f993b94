/*
 * The symbolizer (see symbolize.h), on elfutils.
 *
 * Each file gets its own Dwfl with the file reported at its link-time
 * addresses (base 0), so the addresses we are given are the module's
 * addresses. libdwfl finds separate debug files (build-id, debuglink)
 * through dwfl_standard_find_debuginfo and gives us the symbol table;
 * DWARF is loaded only when a file is first looked up in.
 *
 * Lookups go through indexes built once per file or per unit, because
 * the libraries' own are linear per address: the symbol table is sorted
 * into a range table here (dwfl_module_addrinfo scans every symbol), and
 * inlined frames come from one walk over a unit's DIE tree that collects
 * every subprogram and inlined subroutine with its ranges and enclosing
 * function. That is what eu-addr2line -i gets from dwarf_getscopes() for
 * each address, at the cost of one walk per unit instead of one per
 * address.
 *
 * Results are cached per file by address, since profiles repeat the same
 * addresses: the frames of every address looked up live in one array.
 *
 * This file opens files and answers lookups; sym-file.c says what an
 * opened file is (sections, segments, source); sym-dwarf.c reads DWARF and
 * sym-table.c the symbol table (their shared structures: sym-file.h).
 */
#include "symbols/symbolize.h"

#include "symbols/demangle.h"
#include "symbols/eh-frame.h"
#include "symbols/sym-cache.h"
#include "symbols/sym-file.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hex.h"
#include "util/array.h"
#include "util/path.h"
#include "util/readall.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A debuginfod server that stalls costs DEBUGINFOD_TIMEOUT on every
 * binary libdwfl asks it about; after the first such wait this process
 * asks no server again (libdebuginfod reads DEBUGINFOD_URLS on each
 * query). Process-wide, as the environment is.
 */
static int debuginfod_stalled;

int symbolizer_debuginfod_stalled(void)
{
	return debuginfod_stalled;
}

/* After a failed search that took t0..now: gives up on the servers when
 * it took about their whole timeout. */
static void check_stall(uint64_t t0)
{
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	double limit = t ? atof(t) : 90;

	if (limit > 0 && (double)(time_now_ns(CLOCK_MONOTONIC) - t0) / 1e9 >= limit - 0.5) {
		unsetenv("DEBUGINFOD_URLS");
		debuginfod_stalled = 1;
	}
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	int asks = getenv("DEBUGINFOD_URLS") != NULL;
	uint64_t t0 = asks ? time_now_ns(CLOCK_MONOTONIC) : 0;
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);

	if (asks && fd < 0)
		check_stall(t0);
	return fd;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int asks = getenv("DEBUGINFOD_URLS") != NULL;
	uint64_t t0 = asks ? time_now_ns(CLOCK_MONOTONIC) : 0;
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);

	if (asks && fd < 0)
		check_stall(t0);
	return fd;
}

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	u64map_init(&s->files_by_inode);
	u64map_init(&s->demangled);
	u64map_init(&s->by_build_id);
	strpool_init(&s->strings);
	s->callbacks.find_elf = find_elf;
	s->callbacks.find_debuginfo = find_debuginfo;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

static void sym_file_free(struct sym_file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->fd >= 0)
		close(f->fd);
	while (f->cus) {
		struct cu_index *next = f->cus->next;
		sym_cu_index_free(f->cus);
		f->cus = next;
	}
	sym_cache_free(f->cache);
	u64map_release(&f->addr_cache);
	u64map_release(&f->cu_by_offset);
	free(f->frames);
	ranges_release(&f->span_ranges);
	free(f->spans);
	ranges_release(&f->syms);
	ranges_release(&f->fdes);
	free(f->fde_names);
	free(f->fde_parent);
	free(f->sym_names);
	free(f->sym_shown);
	free(f->ifuncs);
	free(f->segs);
	free(f);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->files) {
		struct sym_file *next = s->files->next;
		sym_file_free(s->files);
		s->files = next;
	}
	u64map_release(&s->files_by_inode);
	u64map_release(&s->demangled);
	u64map_release(&s->by_build_id);
	strpool_release(&s->strings);
	free(s->cache_dir);
	free(s);
}

static uint64_t inode_key(dev_t dev, ino_t ino)
{
	return (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;
}

void sym_file_mark(struct sym_file *f)
{
	if (f)
		f->in_use = 1;
}

size_t symbolizer_files(const struct symbolizer *s)
{
	size_t n = 0;

	for (const struct sym_file *f = s->files; f; f = f->next)
		n++;
	return n;
}

/* by_build_id's entries whose file stays: u64map_each's callback. An
 * answer "no such file" goes: the binary may be back by the next ask, and
 * a host running program after program would keep one for each. */
struct keep_ids {
	struct u64map *to;
	int failed;
};

static void keep_build_id(void *arg, uint64_t key, uint64_t val)
{
	struct keep_ids *k = arg;
	const struct sym_file *f = (const struct sym_file *)(uintptr_t)val;

	if (f && f->in_use && u64map_put(k->to, key, val) < 0)
		k->failed = 1;
}

size_t symbolizer_sweep(struct symbolizer *s, size_t keep)
{
	size_t unused = 0, closed = 0;

	if (s->vdso)
		s->vdso->in_use = 1;
	for (struct sym_file *f = s->files; f; f = f->next)
		unused += !f->in_use;
	/* The maps are rebuilt from the files that stay, first, so that a
	 * failure (no memory) leaves every file open and every map whole. */
	struct u64map by_inode, by_id;
	struct keep_ids k = {.to = &by_id};
	u64map_init(&by_inode);
	u64map_init(&by_id);
	if (unused > keep) {
		for (struct sym_file *f = s->files; f && !k.failed; f = f->next)
			if (f->in_use && f->ino &&
			    u64map_put(&by_inode, inode_key(f->dev, f->ino), 0) < 0)
				k.failed = 1;
		if (!k.failed)
			u64map_each(&s->by_build_id, keep_build_id, &k);
	}
	if (unused <= keep || k.failed) {
		u64map_release(&by_inode);
		u64map_release(&by_id);
		for (struct sym_file *f = s->files; f; f = f->next)
			f->in_use = 0;
		return 0;
	}
	/* The files that stay, in their order; the others closed. */
	struct sym_file **link = &s->files, *kept = NULL, **kept_end = &kept;
	while (*link) {
		struct sym_file *f = *link;
		*link = f->next;
		if (!f->in_use) {
			sym_file_free(f);
			closed++;
			continue;
		}
		f->in_use = 0;
		f->next = NULL;
		*kept_end = f;
		kept_end = &f->next;
	}
	s->files = kept;
	for (struct sym_file *f = s->files; f; f = f->next)
		f->hash_next = NULL;
	/* The list is newest first: walking it backwards would put the
	 * newest file at each chain's head; the order in a chain only
	 * matters for files with one inode, rewritten in place, and
	 * find_cached() checks every one of them. */
	for (struct sym_file *f = s->files; f; f = f->next) {
		if (!f->ino)
			continue;
		uint64_t key = inode_key(f->dev, f->ino), head = 0;
		u64map_get(&by_inode, key, &head);
		f->hash_next = (struct sym_file *)(uintptr_t)head;
		u64map_put(&by_inode, key, (uintptr_t)f); /* the key is there: no allocation */
	}
	u64map_release(&s->files_by_inode);
	u64map_release(&s->by_build_id);
	s->files_by_inode = by_inode;
	s->by_build_id = by_id;
	return closed;
}

/* A new sym_file named path, reading fd (ours now; -1 for none), with
 * its tables empty. NULL when memory runs out (fd is then the caller's). */
static struct sym_file *sym_file_alloc(struct symbolizer *s, const char *path, int fd)
{
	struct sym_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = fd;
	u64map_init(&f->addr_cache);
	u64map_init(&f->cu_by_offset);
	ranges_init(&f->syms);
	ranges_init(&f->fdes);
	ranges_init(&f->span_ranges);
	f->path = strpool_intern(&s->strings, path);
	if (!f->path) {
		f->fd = -1;
		sym_file_free(f);
		return NULL;
	}
	return f;
}

const char *sym_name_demangled(struct symbolizer *s, const char *name)
{
	uint64_t v;

	if (!name || !demangle_is_mangled(name))
		return name;
	if (u64map_get(&s->demangled, (uintptr_t)name, &v))
		return (const char *)(uintptr_t)v;
	char *d = demangle_symbol(name);
	const char *r = d ? strpool_intern(&s->strings, d) : name;
	free(d);
	if (r && u64map_put(&s->demangled, (uintptr_t)name, (uintptr_t)r) < 0)
		return NULL;
	return r;
}

/*
 * Checks the ELF header ourselves before elfutils sees the file: libdwfl
 * would also accept compressed images and archives, which are not what a
 * process maps. Only executables and shared objects have the link-time
 * addresses that symbolizer_lookup() takes.
 */
static int check_elf_header(int fd)
{
	unsigned char h[EI_NIDENT + 2];
	ssize_t n = pread(fd, h, sizeof(h), 0);

	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (h[EI_CLASS] != ELFCLASS64 && h[EI_CLASS] != ELFCLASS32)
		return -ENOEXEC;
	unsigned type = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[EI_NIDENT] << 8 | h[EI_NIDENT + 1]
						  : (unsigned)h[EI_NIDENT + 1] << 8 | h[EI_NIDENT];
	if (type != ET_EXEC && type != ET_DYN)
		return -ENOEXEC;
	return 0;
}

static int read_load_segments(struct sym_file *f)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	GElf_Ehdr ehdr;
	size_t phnum;

	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	f->elf_type = ehdr.e_type;
	f->segs = calloc(phnum ? phnum : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs++] =
		    (struct load_seg){ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_flags};
	}
	return 0;
}

static int read_build_id(struct symbolizer *s, struct sym_file *f)
{
	const unsigned char *bits;
	GElf_Addr at;
	char buf[2 * 64 + 1];
	int len = dwfl_module_build_id(f->mod, &bits, &at);

	if (len <= 0 || len > 64)
		len = 0;
	hex_of(bits, (size_t)len, buf);
	f->build_id = strpool_intern(&s->strings, buf);
	return f->build_id ? 0 : -ENOMEM;
}

/* Sets up libdwfl on the file; fd is ours and stays ours. */
static int sym_file_report(struct symbolizer *s, struct sym_file *f)
{
	const char *base = strrchr(f->path, '/');
	int dwfl_fd;

	f->dwfl = dwfl_begin(&s->callbacks);
	if (!f->dwfl)
		return -ENOMEM;
	/* libdwfl takes ownership of the descriptor it is given. */
	dwfl_fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (dwfl_fd < 0)
		return -errno;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, base ? base + 1 : f->path, f->path, dwfl_fd, 0, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(dwfl_fd);
		return -ENOEXEC;
	}
	return 0;
}

static struct sym_file *find_cached(struct symbolizer *s, const struct stat *st)
{
	uint64_t v;

	if (!u64map_get(&s->files_by_inode, inode_key(st->st_dev, st->st_ino), &v))
		return NULL;
	/* Same inode but another size or time: the file was rewritten in
	 * place, so it is a new file for us. */
	for (struct sym_file *f = (struct sym_file *)(uintptr_t)v; f; f = f->hash_next)
		if (f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
		    f->mtime.tv_sec == st->st_mtim.tv_sec &&
		    f->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return f;
	return NULL;
}

int symbolizer_open(struct symbolizer *s, const char *path, int fd, struct sym_file **out)
{
	struct stat st;
	struct sym_file *f;
	uint64_t key, head = 0;
	int own, rc;

	if (!s || !path || !out)
		return -EINVAL;
	/* O_NONBLOCK: a path from a target may name a FIFO by now. */
	own = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0)
		      : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (own < 0)
		return -errno;
	if (fstat(own, &st) < 0) {
		rc = -errno;
		close(own);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(own);
		return -ENOEXEC;
	}
	f = find_cached(s, &st);
	if (f) {
		close(own);
		*out = f;
		return 0;
	}
	rc = check_elf_header(own);
	if (rc < 0) {
		close(own);
		return rc;
	}
	f = sym_file_alloc(s, path, own);
	if (!f) {
		close(own);
		return -ENOMEM;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	rc = sym_file_report(s, f);
	if (rc == 0)
		rc = read_load_segments(f);
	if (rc == 0)
		rc = read_build_id(s, f);
	key = inode_key(st.st_dev, st.st_ino);
	u64map_get(&s->files_by_inode, key, &head);
	if (rc == 0)
		rc = u64map_put(&s->files_by_inode, key, (uintptr_t)f);
	if (rc < 0) {
		sym_file_free(f);
		return rc;
	}
	f->hash_next = (struct sym_file *)(uintptr_t)head;
	f->next = s->files;
	s->files = f;
	*out = f;
	return 0;
}

/* Size of the ELF image at img: the furthest end of its section header
 * table and of its loadable segments. 0 if it does not look like ELF. */
static size_t elf_image_size(const unsigned char *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	uint64_t size;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > VDSO_MAX_SIZE ||
	    eh->e_phnum > 64)
		return 0;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (eh->e_shoff > VDSO_MAX_SIZE || size > VDSO_MAX_SIZE)
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_offset > VDSO_MAX_SIZE || ph[i].p_filesz > VDSO_MAX_SIZE)
			return 0;
		if (ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	}
	return size;
}

int symbolizer_open_vdso(struct symbolizer *s, struct sym_file **out)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	size_t size;
	int fd, rc;

	if (!s || !out)
		return -EINVAL;
	if (s->vdso) {
		*out = s->vdso;
		return 0;
	}
	if (!img)
		return -ENOENT;
	size = elf_image_size(img);
	if (size == 0)
		return -ENOEXEC;
	/* The image is copied into a file so that it goes through the same
	 * path as every other file (libdwfl reads files). */
	fd = memfd_create("[vdso]", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, img, size);
	if (rc == 0)
		rc = symbolizer_open(s, "[vdso]", fd, out);
	close(fd);
	if (rc == 0)
		s->vdso = *out;
	return rc;
}

/* Reads .eh_frame's function ranges of f, once. */
static void load_fdes(struct sym_file *f)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_file_find_section(f, ".eh_frame", &sh);
	Elf_Data *d = scn && sh.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;

	f->fdes_built = 1;
	if (d && d->d_buf && eh_frame_ranges(d->d_buf, d->d_size, sh.sh_addr, &f->fdes) > 0 &&
	    ranges_finish(&f->fdes, 0) == 0)
		f->fde_names = calloc(f->fdes.n, sizeof(*f->fde_names));
}

/* f's .eh_frame function ranges, read on first use. */
static const struct ranges *fdes_of(struct sym_file *f)
{
	if (!f->fdes_built)
		load_fdes(f);
	return &f->fdes;
}

/*
 * Code that neither symbols nor DWARF name (a stripped binary): the
 * function .eh_frame says vaddr is in, as "module!0xSTART-0xEND" (file
 * addresses, as nm and objdump show them), so that a profile has one row
 * per function and not one per address; "FUNC.cold" where the range is
 * the cold part of a named function. NULL when no entry covers it, or
 * out of memory (the address is then shown as an offset).
 */
static const char *fde_name(struct symbolizer *s, struct sym_file *f, uint64_t vaddr)
{
	const struct ranges *fdes = fdes_of(f);
	const struct range *r = f->fde_names ? ranges_find(fdes, vaddr) : NULL;
	if (!r)
		return NULL;
	const char **name = &f->fde_names[r - f->fdes.v];
	uint32_t parent;
	if (!*name && sym_cold_parent(f, r, &parent) == 1) {
		/* As a full symbol table names it. */
		const char *raw = strpool_intern(&s->strings, f->sym_names[parent]);
		const char *fn = raw ? sym_table_display_name(s, raw) : NULL;
		char buf[512];
		if (fn && snprintf(buf, sizeof(buf), "%s.cold", fn) < (int)sizeof(buf))
			*name = strpool_intern(&s->strings, buf);
	}
	if (!*name) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%s!0x%" PRIx64 "-0x%" PRIx64, path_base(f->path), r->lo,
			 r->hi);
		*name = strpool_intern(&s->strings, buf);
	}
	return *name;
}

int symbolizer_function_range(struct sym_file *f, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	uint32_t idx;
	int rc = f ? sym_table_find(f, vaddr, &idx) : -EINVAL;
	const struct range *r;

	if (rc < 0)
		return rc;
	r = ranges_find(rc > 0 ? &f->syms : fdes_of(f), vaddr);
	if (!r)
		return 0;
	*lo = r->lo;
	*hi = r->hi;
	return 1;
}

int sym_resolve(struct symbolizer *s, struct sym_file *f, uint64_t vaddr, struct sym_frame *out,
		int cap)
{
	const char *sys = NULL, *pretty = NULL;
	int n = 0, complete = 0;
	uint32_t idx;
	int rc = sym_table_find(f, vaddr, &idx);

	if (rc < 0)
		return rc;
	if (rc > 0) {
		/* Interned and demangled once per symbol. */
		const char **shown = &f->sym_shown[2 * (size_t)idx];
		if (!shown[1]) {
			shown[0] = strpool_intern(&s->strings, f->sym_names[idx]);
			shown[1] = shown[0] ? sym_table_display_name(s, shown[0]) : NULL;
			if (!shown[1])
				return -ENOMEM;
		}
		sys = shown[0];
		pretty = shown[1];
	}
	if (sym_file_load_dwarf(f)) {
		n = sym_dwarf_frames(s, f, vaddr, out, cap, &complete);
		if (n < 0)
			return n;
	}
	if (n == 0 && !sys)
		sys = pretty = fde_name(s, f, vaddr);
	if (n == 0) {
		if (!sys || cap < 1)
			return 0;
		/* Go keeps lines and inlined calls for its own tracebacks:
		 * stripped, they stay. */
		struct gopclntab_frame go[16];
		int g = sym_table_go_frames(f, vaddr, go, cap < 16 ? cap : 16);
		for (int i = 0; i < g; i++) {
			const char *name =
			    i < g - 1 ? strpool_intern(&s->strings, go[i].function) : sys;
			const char *file =
			    go[i].file ? strpool_intern(&s->strings, go[i].file) : NULL;
			out[i] = (struct sym_frame){name ? sym_table_display_name(s, name) : NULL,
						    name, file, file ? go[i].line : 0};
			if (!out[i].function)
				return -ENOMEM;
		}
		if (g > 0) {
			out[g - 1].function = pretty;
			return g;
		}
		out[0] = (struct sym_frame){pretty, sys, NULL, 0};
		return 1;
	}
	/* The outermost frame is the function the linker knows: name it as
	 * the symbol table does (it also tells clones like foo.cold apart). */
	if (sys && (complete || out[n - 1].function == NULL)) {
		out[n - 1].function = pretty;
		out[n - 1].system_name = sys;
	}
	return n;
}

int u64vec_push(struct u64vec *a, uint64_t x)
{
	uint64_t *v = array_reserve(a->v, &a->cap, a->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	a->v = v;
	a->v[a->n++] = x;
	return 0;
}

int sym_boundaries(struct sym_file *f, struct u64vec *out)
{
	uint32_t idx;
	int rc = sym_table_find(f, 0, &idx); /* builds the table */

	if (rc < 0)
		return rc;
	const struct ranges *tables[] = {&f->syms, fdes_of(f)};
	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			if (u64vec_push(out, tables[t]->v[i].lo) < 0 ||
			    u64vec_push(out, tables[t]->v[i].hi) < 0)
				return -ENOMEM;
	return 0;
}

int symbolizer_set_cache(struct symbolizer *s, const char *dir, uint64_t max_bytes,
			 uint64_t build_max)
{
	char *copy = dir ? strdup(dir) : NULL;

	if (dir && !copy)
		return -ENOMEM;
	free(s->cache_dir);
	s->cache_dir = copy;
	s->cache_max = max_bytes ? max_bytes : SYM_CACHE_DEFAULT_MAX;
	s->cache_build_max = build_max ? build_max : UINT64_MAX;
	return 0;
}

/*
 * The table of f, from the cache directory or built now and saved there,
 * on the first lookup in f. A table that says the binary had no DWARF is
 * rebuilt when DWARF is found now (a debug package installed since).
 * Without a table (no cache, no build-id, too big, a cache directory
 * that cannot be written, a failure) lookups go the direct way; a table
 * built but then not saved (a full disk) is still used.
 */
static void cache_attach(struct symbolizer *s, struct sym_file *f)
{
	struct sym_cache *c = NULL;

	char path[PATH_MAX];

	f->cache_tried = 1;
	if (!s->cache_dir || !f->build_id[0])
		return;
	/* A binary too big to get a table, and without one kept from
	 * before, is not read whole for nothing. */
	if ((uint64_t)f->size > s->cache_build_max &&
	    (sym_cache_path(s->cache_dir, f->build_id, path, sizeof(path)) < 0 ||
	     access(path, F_OK) < 0))
		return;
	uint64_t source = sym_file_source(f, NULL);
	if (source && sym_cache_load(s->cache_dir, f->build_id, source, &c) == 0) {
		if (sym_cache_has_dwarf(c) || !sym_file_load_dwarf(f)) {
			f->cache = c;
			return;
		}
		sym_cache_free(c);
	}
	if ((uint64_t)f->size > s->cache_build_max ||
	    sym_cache_can_save(s->cache_dir, f->build_id) < 0 || sym_cache_build(s, f, &c) < 0)
		return;
	sym_cache_save(s->cache_dir, c, s->cache_max);
	f->cache = c;
}

int symbolizer_keep_table(struct symbolizer *s, struct sym_file *f)
{
	if (!f->cache_tried)
		cache_attach(s, f);
	return f->cache ? 0 : -ENOENT;
}

/* A sym_file made of a kept table alone: the binary is not at hand. */
static int open_table_only(struct symbolizer *s, const char *build_id, const char *path,
			   struct sym_file **out)
{
	struct sym_cache *c;
	size_t nsegs;

	if (!s->cache_dir || sym_cache_load(s->cache_dir, build_id, 0, &c) < 0)
		return -ENOENT;
	struct sym_file *f = sym_file_alloc(s, path && path[0] ? path : build_id, -1);
	const struct load_seg *segs = sym_cache_segments(c, &nsegs);
	if (!f) {
		sym_cache_free(c);
		return -ENOMEM;
	}
	f->cache = c;
	f->cache_tried = 1;
	f->segs = calloc(nsegs ? nsegs : 1, sizeof(*f->segs));
	f->build_id = strpool_intern(&s->strings, build_id);
	if (!f->segs || !f->build_id) {
		sym_file_free(f);
		return -ENOMEM;
	}
	memcpy(f->segs, segs, nsegs * sizeof(*segs));
	f->nsegs = nsegs;
	f->next = s->files;
	s->files = f;
	*out = f;
	return 0;
}

int symbolizer_open_gone(struct symbolizer *s, const char *build_id, const char *path,
			 uid_t owner, struct sym_file **out)
{
	struct stat st;

	if (!build_id || !build_id[0])
		return -ENOENT;
	/* A table alone (no descriptor) passed the cache's own checks. */
	for (struct sym_file *f = s->files; f; f = f->next)
		if (f->build_id && strcmp(f->build_id, build_id) == 0 &&
		    (f->fd < 0 ||
		     (fstat(f->fd, &st) == 0 && (st.st_uid == 0 || st.st_uid == owner)))) {
			*out = f;
			return 0;
		}
	int rc = open_table_only(s, build_id, path, out);
	return rc == -ENOMEM ? rc : rc < 0 ? -ENOENT : 0;
}

int symbolizer_open_build_id(struct symbolizer *s, const char *build_id, const char *path,
			     struct sym_file **out)
{
	const char *key = build_id ? strpool_intern(&s->strings, build_id) : NULL;
	uint64_t v;
	int rc;

	if (!key || !key[0])
		return -EINVAL;
	if (u64map_get(&s->by_build_id, (uintptr_t)key, &v)) {
		*out = (struct sym_file *)(uintptr_t)v;
		return *out ? 0 : -ENOENT;
	}
	*out = NULL;
	if (path && path[0] == '/' && symbolizer_open(s, path, -1, out) == 0 &&
	    strcmp(sym_file_build_id(*out), key) != 0)
		*out = NULL;
	if (!*out && (rc = open_table_only(s, key, path, out)) < 0 && rc != -ENOENT)
		return rc;
	if (u64map_put(&s->by_build_id, (uintptr_t)key, (uintptr_t)*out) < 0)
		return -ENOMEM;
	return *out ? 0 : -ENOENT;
}

int symbolizer_lookup(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		      struct sym_frame *frames, int max)
{
	struct sym_frame tmp[MAX_FRAMES];
	uint64_t v;
	size_t first;
	int n;

	if (!s || !f || max < 0 || (max > 0 && !frames))
		return -EINVAL;
	if (!f->cache_tried)
		cache_attach(s, f);
	if (f->cache)
		return sym_cache_lookup(f->cache, vaddr, frames, max);
	if (!u64map_get(&f->addr_cache, vaddr, &v)) {
		n = sym_resolve(s, f, vaddr, tmp, MAX_FRAMES);
		if (n < 0)
			return n;
		struct sym_frame *nf =
		    array_reserve(f->frames, &f->frames_cap, f->nframes + (size_t)n, sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		f->frames = nf;
		if (n > 0)
			memcpy(f->frames + f->nframes, tmp, (size_t)n * sizeof(*tmp));
		v = (uint64_t)f->nframes << 8 | (uint64_t)n;
		if (u64map_put(&f->addr_cache, vaddr, v) < 0)
			return -ENOMEM;
		f->nframes += (size_t)n;
	}
	first = (size_t)(v >> 8);
	n = (int)(v & 0xff);
	if (n > max)
		n = max;
	if (n > 0)
		memcpy(frames, f->frames + first, (size_t)n * sizeof(*frames));
	return n;
}

void symbolizer_prefetch(struct symbolizer *s, struct sym_file *f, uint64_t vaddr)
{
	if (f && f->cache)
		sym_cache_prefetch(f->cache, vaddr);
}

struct Dwfl_Module *sym_file_module(struct sym_file *f)
{
	return f ? f->mod : NULL;
}
