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
 */
#include "symbols/symbolize.h"

#include "symbols/demangle.h"
#include "util/array.h"
#include "util/ranges.h"
#include "util/strpool.h"
#include "util/u64map.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deepest inline chain we report, and deepest DIE nesting we walk: real
 * code stays far below both; hostile DWARF does not get more. */
#define MAX_FRAMES    64
#define MAX_DIE_DEPTH 256
/* The vDSO is a few pages; refuse to copy anything claiming to be huge. */
#define VDSO_MAX_SIZE (1 << 20)

struct load_seg {
	uint64_t offset, filesz, vaddr;
};

/* A subprogram or inlined subroutine of a unit's index. */
struct cu_func {
	Dwarf_Die die;
	int parent; /* enclosing function's index, -1 for none */
	int inlined;
	int resolved; /* names and call site looked up */
	const char *name, *system_name;
	const char *call_file; /* where an inlined call sits in its parent */
	int call_line;
};

struct cu_index {
	struct cu_index *next;
	Dwarf_Die cudie;
	struct cu_func *funcs;
	size_t nfuncs, funcs_cap;
	struct ranges ranges; /* idx: funcs[] */
	Dwarf_Files *files;   /* for DW_AT_call_file; NULL if unreadable */
	size_t nfiles;
	const char *comp_dir; /* absolute compilation directory, or NULL */
	struct {
		const char *src, *path;
	} paths[16]; /* cu_source_path() of the line table's names, by pointer */
};

/* A unit found by its own ranges, for files without .debug_aranges. */
struct cu_span {
	Dwarf_Die cudie;
	Dwarf_Addr bias;
};

struct sym_file {
	struct sym_file *next;	    /* all files, for freeing */
	struct sym_file *hash_next; /* files with the same (dev, ino) hash */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	const char *path;
	const char *build_id;
	int fd;
	int elf_type;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct load_seg *segs;
	size_t nsegs;
	int dwarf_state; /* 0 not loaded yet, 1 present, -1 absent */

	struct ranges syms;	/* idx: sym_names[] */
	const char **sym_names; /* in the ELF string tables, live with dwfl */
	const char **sym_shown; /* [2 * idx]: interned raw name, [+1]: display name */
	int syms_built;

	struct u64map addr_cache; /* vaddr -> first frame << 8 | count */
	struct sym_frame *frames;
	size_t nframes, frames_cap;

	struct u64map cu_by_offset; /* unit DIE offset -> struct cu_index * */
	struct cu_index *cus;
	struct ranges span_ranges; /* idx: spans[]; built on an aranges miss */
	struct cu_span *spans;
	int spans_built;
};

struct symbolizer {
	struct sym_file *files;
	struct u64map files_by_inode; /* hash of (dev, ino) -> struct sym_file * */
	struct sym_file *vdso;
	struct strpool strings;
	struct u64map demangled; /* interned mangled name -> interned demangled */
	char *debuginfo_path;	 /* NULL: elfutils' default search path */
	Dwfl_Callbacks callbacks;
};

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	u64map_init(&s->files_by_inode);
	u64map_init(&s->demangled);
	strpool_init(&s->strings);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

static void cu_index_free(struct cu_index *ci)
{
	free(ci->funcs);
	ranges_release(&ci->ranges);
	free(ci);
}

static void sym_file_free(struct sym_file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->fd >= 0)
		close(f->fd);
	while (f->cus) {
		struct cu_index *next = f->cus->next;
		cu_index_free(f->cus);
		f->cus = next;
	}
	u64map_release(&f->addr_cache);
	u64map_release(&f->cu_by_offset);
	free(f->frames);
	ranges_release(&f->span_ranges);
	free(f->spans);
	ranges_release(&f->syms);
	free(f->sym_names);
	free(f->sym_shown);
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
	strpool_release(&s->strings);
	free(s);
}

static uint64_t inode_key(dev_t dev, ino_t ino)
{
	return (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;
}

/* The interned demangled form of an interned name (itself if it is not
 * mangled), computed once per name. NULL only when memory runs out. */
static const char *name_demangled(struct symbolizer *s, const char *name)
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
		f->segs[f->nsegs++] = (struct load_seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	return 0;
}

static int read_build_id(struct symbolizer *s, struct sym_file *f)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr at;
	char buf[2 * 64 + 1];
	int len = dwfl_module_build_id(f->mod, &bits, &at);

	if (len <= 0 || len > 64)
		len = 0;
	for (int i = 0; i < len; i++) {
		buf[2 * i] = hex[bits[i] >> 4];
		buf[2 * i + 1] = hex[bits[i] & 15];
	}
	buf[2 * len] = '\0';
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
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(own);
		return -ENOMEM;
	}
	f->fd = own;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	u64map_init(&f->addr_cache);
	u64map_init(&f->cu_by_offset);
	ranges_init(&f->syms);
	ranges_init(&f->span_ranges);
	f->path = strpool_intern(&s->strings, path);
	rc = f->path ? sym_file_report(s, f) : -ENOMEM;
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
	size_t size, done = 0;
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
	while (done < size) {
		ssize_t n = write(fd, img + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			close(fd);
			return rc;
		}
		done += (size_t)n;
	}
	rc = symbolizer_open(s, "[vdso]", fd, out);
	close(fd);
	if (rc == 0)
		s->vdso = *out;
	return rc;
}

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

/* Loads DWARF (from the file or a separate debug file) on first need. */
static int sym_file_load_dwarf(struct sym_file *f)
{
	if (f->dwarf_state == 0) {
		Dwarf_Addr bias;
		f->dwarf_state = dwfl_module_getdwarf(f->mod, &bias) ? 1 : -1;
	}
	return f->dwarf_state > 0;
}

int sym_file_has_debuginfo(const struct sym_file *f)
{
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

/* ---- DWARF unit lookup ---- */

/*
 * Files without .debug_aranges (Clang and rustc do not emit it by
 * default) leave dwfl_module_addrdie() blind; a table of each unit's own
 * ranges stands in for it.
 */
static int build_spans(struct sym_file *f)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t n = 0, cap = 0;
	int rc;

	f->spans_built = 1;
	while ((cu = dwfl_module_nextcu(f->mod, cu, &bias)) != NULL) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		struct cu_span *v = array_reserve(f->spans, &cap, n + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->spans = v;
		f->spans[n] = (struct cu_span){*cu, bias};
		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
			if ((rc = ranges_add(&f->span_ranges, lo + bias, hi + bias, (uint32_t)n,
					     0)) < 0)
				return rc;
		n++;
	}
	return ranges_finish(&f->span_ranges, 0);
}

/* Finds the unit covering vaddr: 1 and *cu, *bias; 0 if none; -errno. */
static int find_cu(struct sym_file *f, uint64_t vaddr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(f->mod, vaddr, bias);
	const struct range *r;

	if (d) {
		*cu = *d;
		return 1;
	}
	if (!f->spans_built) {
		int rc = build_spans(f);
		if (rc < 0)
			return rc;
	}
	r = ranges_find(&f->span_ranges, vaddr);
	if (!r)
		return 0;
	*cu = f->spans[r->idx].cudie;
	*bias = f->spans[r->idx].bias;
	return 1;
}

/* ---- per-unit function index ---- */

static int cu_add_func(struct cu_index *ci, Dwarf_Die *die, int parent, int inlined)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t before = ci->ranges.n;
	int idx = (int)ci->nfuncs, rc;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if ((rc = ranges_add(&ci->ranges, lo, hi, (uint32_t)idx, (uint32_t)idx)) < 0)
			return rc;
	/* No code (a declaration or an abstract inline instance): it cannot
	 * contain an address, nor can anything nested in it. */
	if (ci->ranges.n == before)
		return -ENOENT;
	struct cu_func *v = array_reserve(ci->funcs, &ci->funcs_cap, ci->nfuncs + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ci->funcs = v;
	ci->funcs[ci->nfuncs++] = (struct cu_func){
	    .die = *die,
	    .parent = parent,
	    .inlined = inlined,
	};
	return idx;
}

/*
 * DIEs under which functions with code appear. Types are not among them:
 * C++ and Rust compilers put a method's code in a DIE outside its class
 * (pointing back with DW_AT_specification), and type DIEs are most of a
 * unit, so skipping them is most of the walk's speed.
 */
static int walks_into(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return 1;
	default:
		return 0;
	}
}

/*
 * Walks the unit's DIE tree once, iteratively with an explicit stack
 * (DWARF is untrusted: no recursion on its depth), and records every
 * function with code.
 */
static int cu_index_build(struct cu_index *ci)
{
	Dwarf_Die stack[MAX_DIE_DEPTH];
	int func_of[MAX_DIE_DEPTH]; /* innermost function enclosing stack[d] */
	int depth = 0, rc;

	rc = dwarf_child(&ci->cudie, &stack[0]);
	func_of[0] = -1;
	while (rc == 0) {
		Dwarf_Die *die = &stack[depth];
		int tag = dwarf_tag(die);
		int self = func_of[depth];
		int descend = walks_into(tag);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			int r =
			    cu_add_func(ci, die, func_of[depth], tag == DW_TAG_inlined_subroutine);
			if (r < 0 && r != -ENOENT)
				return r;
			if (r < 0)
				descend = 0;
			else
				self = r;
		}
		if (descend && depth + 1 < MAX_DIE_DEPTH &&
		    dwarf_child(die, &stack[depth + 1]) == 0) {
			func_of[++depth] = self;
			continue;
		}
		for (;;) {
			Dwarf_Die next;
			rc = dwarf_siblingof(&stack[depth], &next);
			if (rc == 0) {
				stack[depth] = next;
				break;
			}
			if (rc < 0 || depth == 0)
				break;
			depth--;
		}
	}
	rc = ranges_finish(&ci->ranges, 0);
	if (rc < 0)
		return rc;
	if (dwarf_getsrcfiles(&ci->cudie, &ci->files, &ci->nfiles) != 0) {
		ci->files = NULL;
		ci->nfiles = 0;
	}
	Dwarf_Attribute attr;
	ci->comp_dir = dwarf_formstring(dwarf_attr(&ci->cudie, DW_AT_comp_dir, &attr));
	if (ci->comp_dir && ci->comp_dir[0] != '/')
		ci->comp_dir = NULL;
	return 0;
}

/*
 * A source file name as a reader can open it: a relative name is joined
 * to the unit's compilation directory when that is absolute. (Debian's
 * reproducible builds record relative directories; joining those would
 * only add noise.) Returns the interned name, NULL if out of memory.
 */
static const char *cu_source_path(struct symbolizer *s, const struct cu_index *ci, const char *file)
{
	char buf[4096];
	int n;

	if (file[0] == '/' || !ci->comp_dir)
		return strpool_intern(&s->strings, file);
	if (file[0] == '.' && file[1] == '/')
		file += 2;
	n = snprintf(buf, sizeof(buf), "%s/%s", ci->comp_dir, file);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return strpool_intern(&s->strings, file);
	return strpool_intern(&s->strings, buf);
}

/* cu_source_path() of a name from the unit's line table, whose strings
 * stay put: most lookups in a unit hit one of a few files. */
static const char *cu_line_path(struct symbolizer *s, struct cu_index *ci, const char *src)
{
	size_t slot = ((uintptr_t)src >> 3) % (sizeof(ci->paths) / sizeof(ci->paths[0]));

	if (ci->paths[slot].src != src) {
		const char *path = cu_source_path(s, ci, src);
		if (!path)
			return NULL;
		ci->paths[slot].src = src;
		ci->paths[slot].path = path;
	}
	return ci->paths[slot].path;
}

static int cu_index_get(struct sym_file *f, Dwarf_Die *cudie, struct cu_index **out)
{
	uint64_t key = dwarf_dieoffset(cudie), v;
	struct cu_index *ci;
	int rc;

	if (u64map_get(&f->cu_by_offset, key, &v)) {
		*out = (struct cu_index *)(uintptr_t)v;
		return 0;
	}
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return -ENOMEM;
	ci->cudie = *cudie;
	ranges_init(&ci->ranges);
	rc = cu_index_build(ci);
	if (rc == 0)
		rc = u64map_put(&f->cu_by_offset, key, (uintptr_t)ci);
	if (rc < 0) {
		cu_index_free(ci);
		return rc;
	}
	ci->next = f->cus;
	f->cus = ci;
	*out = ci;
	return 0;
}

static const char *die_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

/* Names a function DIE (following abstract origins and specifications to
 * where the name is) and, for an inlined one, its call site. */
static int cu_func_resolve(struct symbolizer *s, struct cu_index *ci, struct cu_func *fn)
{
	const char *linkage, *name;
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (fn->resolved)
		return 0;
	linkage = die_string(&fn->die, DW_AT_linkage_name);
	if (!linkage)
		linkage = die_string(&fn->die, DW_AT_MIPS_linkage_name);
	name = dwarf_diename(&fn->die);
	if (linkage) {
		fn->system_name = strpool_intern(&s->strings, linkage);
		fn->name = fn->system_name ? name_demangled(s, fn->system_name) : NULL;
		/* A linkage name that does not demangle says less than the
		 * plain name. */
		if (fn->name == fn->system_name && name)
			fn->name = strpool_intern(&s->strings, name);
	} else if (name) {
		fn->system_name = strpool_intern(&s->strings, name);
		fn->name = fn->system_name;
	}
	if ((linkage || name) && !fn->name)
		return -ENOMEM;
	if (fn->inlined && ci->files &&
	    dwarf_formudata(dwarf_attr(&fn->die, DW_AT_call_file, &attr), &v) == 0 &&
	    v < ci->nfiles) {
		const char *file = dwarf_filesrc(ci->files, v, NULL, NULL);
		if (file && strcmp(file, "???") != 0) {
			fn->call_file = cu_source_path(s, ci, file);
			if (!fn->call_file)
				return -ENOMEM;
		}
	}
	if (fn->inlined && dwarf_formudata(dwarf_attr(&fn->die, DW_AT_call_line, &attr), &v) == 0 &&
	    v <= 0x7fffffff)
		fn->call_line = (int)v;
	fn->resolved = 1;
	return 0;
}

/*
 * Frames from DWARF, innermost first: the innermost function gets the
 * line table's file:line for the address, each enclosing one the call
 * site of the function inlined into it. *complete tells whether the chain
 * reached the real (out-of-line) function. Returns the count or -errno.
 */
static int resolve_dwarf(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
			 struct sym_frame *out, int cap, int *complete)
{
	Dwarf_Die cudie;
	Dwarf_Addr bias;
	struct cu_index *ci;
	const char *file = NULL;
	int line = 0, n = 0, fi, rc;

	*complete = 0;
	rc = find_cu(f, vaddr, &cudie, &bias);
	if (rc <= 0)
		return rc;
	Dwarf_Addr a = vaddr - bias;
	rc = cu_index_get(f, &cudie, &ci);
	if (rc < 0)
		return rc;
	Dwarf_Line *l = dwarf_getsrc_die(&cudie, a);
	if (l && dwarf_lineno(l, &line) == 0 && line > 0) {
		const char *src = dwarf_linesrc(l, NULL, NULL);
		file = src ? cu_line_path(s, ci, src) : NULL;
		if (src && !file)
			return -ENOMEM;
	}
	if (!file)
		line = 0;
	const struct range *r = ranges_find(&ci->ranges, a);
	fi = r ? (int)r->idx : -1;
	if (fi < 0) {
		if (!file)
			return 0;
		out[0] = (struct sym_frame){NULL, NULL, file, line};
		return 1;
	}
	while (fi >= 0 && n < cap) {
		struct cu_func *fn = &ci->funcs[fi];
		rc = cu_func_resolve(s, ci, fn);
		if (rc < 0)
			return rc;
		out[n++] = (struct sym_frame){fn->name, fn->system_name, file, line};
		if (!fn->inlined) {
			*complete = 1;
			break;
		}
		file = fn->call_file;
		line = fn->call_file ? fn->call_line : 0;
		fi = fn->parent;
		/* An inlined body with no enclosing function in the index: its
		 * caller is whatever the symbol table says, at the call site. */
		if (fi < 0 && n < cap) {
			out[n++] = (struct sym_frame){NULL, NULL, file, line};
			*complete = 1;
		}
	}
	return n;
}

/* ---- symbol table ---- */

/*
 * Which of several symbols at one address names it: sized over sizeless,
 * the public name over internal ones (fewer leading underscores: "qsort"
 * over "__libc_qsort"), global over weak over local, functions over
 * untyped labels, then the shorter name. Higher wins.
 */
static uint32_t symbol_rank(const GElf_Sym *sym, const char *name)
{
	size_t under = strspn(name, "_"), len = strlen(name);
	unsigned bind = GELF_ST_BIND(sym->st_info);
	uint32_t r = sym->st_size != 0;

	r = r << 3 | (uint32_t)(7 - (under > 7 ? 7 : under));
	r = r << 2 | (bind == STB_GLOBAL ? 2u : bind == STB_WEAK ? 1u : 0u);
	r = r << 1 | (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE);
	return r << 12 | (uint32_t)(0xfff - (len > 0xfff ? 0xfff : len));
}

/* Where the section holding a symbol ends, in module addresses. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, uint64_t bias)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;

	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	return sh.sh_addr + sh.sh_size + bias;
}

/* The first symbol start above addr among the sized symbols (sorted in
 * f->syms) and the sizeless ones (sorted starts in loose[]). */
static uint64_t next_start(const struct sym_file *f, const uint64_t *loose, size_t nloose,
			   uint64_t addr)
{
	uint64_t best = UINT64_MAX;
	size_t lo = 0, hi = f->syms.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms.v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < f->syms.n)
		best = f->syms.v[lo].lo;
	for (lo = 0, hi = nloose; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (loose[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nloose && loose[lo] < best)
		best = loose[lo];
	return best;
}

struct loose_sym {
	uint64_t addr, end; /* end: of its section */
	uint32_t idx, rank;
};

static int loose_cmp(const void *a, const void *b)
{
	const struct loose_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Sizeless symbols (assembly labels) reach to the next symbol or the end
 * of their section, and only where no sized symbol already is: a label
 * inside a function does not rename the function.
 */
static int add_loose_symbols(struct sym_file *f, struct loose_sym *loose, size_t n)
{
	uint64_t *starts = malloc((n ? n : 1) * sizeof(*starts));
	int rc = 0;

	if (!starts)
		return -ENOMEM;
	qsort(loose, n, sizeof(*loose), loose_cmp);
	for (size_t i = 0; i < n; i++)
		starts[i] = loose[i].addr;
	/* Ends first, additions after: lookups need the table as sorted. */
	for (size_t i = 0; i < n; i++) {
		uint64_t end = next_start(f, starts, n, loose[i].addr);
		if (loose[i].end && loose[i].end < end)
			end = loose[i].end;
		if (end == UINT64_MAX || ranges_find(&f->syms, loose[i].addr))
			end = 0; /* dropped */
		loose[i].end = end;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = ranges_add(&f->syms, loose[i].addr, loose[i].end, loose[i].idx, loose[i].rank);
	free(starts);
	return rc;
}

static int build_symbols(struct sym_file *f)
{
	int nsyms = dwfl_module_getsymtab(f->mod);
	struct loose_sym *loose = NULL;
	size_t nloose = 0;
	int rc = 0;

	f->syms_built = 1;
	if (nsyms <= 1)
		return 0;
	f->sym_names = calloc((size_t)nsyms, sizeof(*f->sym_names));
	f->sym_shown = calloc((size_t)nsyms * 2, sizeof(*f->sym_shown));
	loose = malloc((size_t)nsyms * sizeof(*loose));
	if (!f->sym_names || !f->sym_shown || !loose) {
		free(loose);
		return -ENOMEM;
	}
	for (int i = 1; i < nsyms && rc == 0; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		const char *name =
		    dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, &elf, NULL);
		int type = name ? GELF_ST_TYPE(sym.st_info) : STT_SECTION;

		/* Only code symbols name code: an address in data, or under a
		 * linker warning "symbol", is unknown rather than that. */
		if (!name || !*name ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1)
			continue;
		f->sym_names[i] = name;
		if (sym.st_size != 0) {
			if (addr + sym.st_size > addr)
				rc = ranges_add(&f->syms, addr, addr + sym.st_size, (uint32_t)i,
						symbol_rank(&sym, name));
		} else {
			loose[nloose++] =
			    (struct loose_sym){addr, section_end(elf, shndx, addr - sym.st_value),
					       (uint32_t)i, symbol_rank(&sym, name)};
		}
	}
	if (rc == 0)
		rc = ranges_finish(&f->syms, 0);
	if (rc == 0 && nloose)
		rc = add_loose_symbols(f, loose, nloose);
	if (rc == 0 && nloose)
		rc = ranges_finish(&f->syms, 0);
	free(loose);
	return rc;
}

/* The index of the code symbol covering vaddr: 1 and *idx, 0 if none,
 * or -errno. */
static int find_symbol(struct sym_file *f, uint64_t vaddr, uint32_t *idx)
{
	const struct range *r;

	if (!f->syms_built) {
		int rc = build_symbols(f);
		if (rc < 0)
			return rc;
	}
	r = ranges_find(&f->syms, vaddr);
	if (!r)
		return 0;
	*idx = r->idx;
	return 1;
}

/* The name to show for a symbol: without its version ("memcpy" for
 * "memcpy@@GLIBC_2.14"), demangled. */
static const char *symbol_display_name(struct symbolizer *s, const char *sys)
{
	const char *at = strchr(sys, '@');
	const char *base = at ? strpool_intern_len(&s->strings, sys, (size_t)(at - sys)) : sys;

	return base ? name_demangled(s, base) : NULL;
}

/* All frames for vaddr, innermost first, into out[cap]. */
static int resolve(struct symbolizer *s, struct sym_file *f, uint64_t vaddr, struct sym_frame *out,
		   int cap)
{
	const char *sys = NULL, *pretty = NULL;
	int n = 0, complete = 0;
	uint32_t idx;
	int rc = find_symbol(f, vaddr, &idx);

	if (rc < 0)
		return rc;
	if (rc > 0) {
		/* Interned and demangled once per symbol. */
		const char **shown = &f->sym_shown[2 * (size_t)idx];
		if (!shown[1]) {
			shown[0] = strpool_intern(&s->strings, f->sym_names[idx]);
			shown[1] = shown[0] ? symbol_display_name(s, shown[0]) : NULL;
			if (!shown[1])
				return -ENOMEM;
		}
		sys = shown[0];
		pretty = shown[1];
	}
	if (sym_file_load_dwarf(f)) {
		n = resolve_dwarf(s, f, vaddr, out, cap, &complete);
		if (n < 0)
			return n;
	}
	if (n == 0) {
		if (!sys)
			return 0;
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

int symbolizer_lookup(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		      struct sym_frame *frames, int max)
{
	struct sym_frame tmp[MAX_FRAMES];
	uint64_t v;
	size_t first;
	int n;

	if (!s || !f || max < 0 || (max > 0 && !frames))
		return -EINVAL;
	if (!u64map_get(&f->addr_cache, vaddr, &v)) {
		n = resolve(s, f, vaddr, tmp, MAX_FRAMES);
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

/* How well name matches a symbol: 3 exact, 2 demangled, 1 demangled
 * without its parameter list ("ns::f" for "ns::f(int)"), 0 not at all. */
static int symbol_match(const char *name, const char *symname, const char *demangled)
{
	size_t n = strlen(name);

	/* "memcpy" is "memcpy@@GLIBC_2.14" too. */
	if (strncmp(name, symname, n) == 0 && (symname[n] == '\0' || symname[n] == '@'))
		return 3;
	if (!demangled)
		return 0;
	if (strcmp(name, demangled) == 0)
		return 2;
	if (strncmp(name, demangled, n) == 0 && demangled[n] == '(')
		return 1;
	return 0;
}

int symbolizer_find_symbol(struct symbolizer *s, struct sym_file *f, const char *name,
			   uint64_t *vaddr, uint64_t *size)
{
	int nsyms, best = 0;

	if (!s || !f || !name || !vaddr)
		return -EINVAL;
	nsyms = dwfl_module_getsymtab(f->mod);
	for (int i = 1; i < nsyms && best < 3; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *symname =
		    dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = symname ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;

		if (!symname || (type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF ||
		    shndx == (GElf_Word)-1 || addr == 0)
			continue;
		char *d = demangle_is_mangled(symname) && strcmp(name, symname) != 0
			      ? demangle_symbol(symname)
			      : NULL;
		int m = symbol_match(name, symname, d);
		free(d);
		if (m > best) {
			best = m;
			*vaddr = addr;
			if (size)
				*size = sym.st_size;
		}
	}
	return best ? 0 : -ENOENT;
}

int symbolizer_foreach_function(struct symbolizer *s, struct sym_file *f,
				int (*fn)(const char *name, uint64_t vaddr, uint64_t size,
					  void *ctx),
				void *ctx)
{
	char buf[512];
	int nsyms;

	if (!s || !f || !fn)
		return -EINVAL;
	nsyms = dwfl_module_getsymtab(f->mod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
		    dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = name ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;

		if (!name || (type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF ||
		    shndx == (GElf_Word)-1 || addr == 0)
			continue;
		/* "memcpy@@GLIBC_2.14" is matched and shown as "memcpy". */
		const char *at = strchr(name, '@');
		if (at) {
			size_t n = (size_t)(at - name);
			if (n >= sizeof(buf))
				continue;
			memcpy(buf, name, n);
			buf[n] = 0;
			name = buf;
		}
		int rc = fn(name, addr, sym.st_size, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

struct Dwfl_Module *sym_file_module(struct sym_file *f)
{
	return f ? f->mod : NULL;
}
