/*
 * The symbolizer's ELF symbol table side (see sym-file.h): the code
 * symbols sorted into a range table (sizeless ones end at the next
 * symbol or their section's end), the name shown for one, and lookups by
 * name for the tracer.
 */
#include "symbols/sym-file.h"

#include "symbols/demangle.h"
#include "symbols/gopclntab.h"
#include "util/array.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

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

/* Go's functions, numbered as they come. */
struct go_fill {
	struct sym_file *f;
	uint32_t n, cap;
};

static int go_count(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	(void)lo, (void)hi, (void)name;
	((struct go_fill *)arg)->cap++;
	return 0;
}

static int go_add(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	struct go_fill *g = arg;

	if (g->n >= g->cap) /* the table changed under us: not possible, but bounded */
		return -EINVAL;
	g->f->sym_names[g->n] = name;
	return ranges_add(&g->f->syms, lo, hi, g->n++, 0);
}

/* The contents of section name, or NULL; its header in *sh. */
static Elf_Data *section_data(struct sym_file *f, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = sym_file_find_section(f, name, sh);
	Elf_Data *d = scn && sh->sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;

	return d && d->d_buf ? d : NULL;
}

/* A Go binary's function table: .gopclntab, or in a position-independent
 * executable an external linker built (cgo's, as Docker's are), inside
 * .data.rel.ro, found by its header. Then the base of its inline trees
 * (moduledata.gofunc, in .noptrdata, where the linker puts the first
 * module's). Once; f->go_table is NULL for a file without one. */
static const uint8_t *go_table_once(struct sym_file *f)
{
	GElf_Shdr sh, md_sh;
	Elf_Data *d, *mdd;

	if (f->go_table_tried)
		return f->go_table;
	f->go_table_tried = 1;
	if ((d = section_data(f, ".gopclntab", &sh)) != NULL) {
		f->go_table = d->d_buf;
		f->go_table_len = d->d_size;
		f->go_table_vaddr = sh.sh_addr;
	} else if ((d = section_data(f, ".data.rel.ro", &sh)) != NULL &&
		   sym_file_find_section(f, ".go.buildinfo", &md_sh)) {
		int64_t at = gopclntab_find(d->d_buf, d->d_size);
		if (at < 0)
			return NULL;
		f->go_table = (const uint8_t *)d->d_buf + at;
		f->go_table_len = d->d_size - (size_t)at;
		f->go_table_vaddr = sh.sh_addr + (uint64_t)at;
	} else {
		return NULL;
	}
	if ((mdd = section_data(f, ".noptrdata", &md_sh)) == NULL ||
	    gopclntab_gofunc(f->go_table, f->go_table_len, f->go_table_vaddr, mdd->d_buf,
			     mdd->d_size, &f->go_gofunc) < 0)
		f->go_gofunc = 0;
	return f->go_table;
}

int sym_table_go_frames(struct sym_file *f, uint64_t vaddr, struct gopclntab_frame *out, int cap)
{
	const uint8_t *d = go_table_once(f);
	int n = d ? gopclntab_frames(d, f->go_table_len, f->go_gofunc, sym_file_read_vaddr, f,
				     vaddr, out, cap)
		  : -ENOENT;

	return n < 0 ? -ENOENT : n;
}

int sym_table_go_step(struct sym_file *f, uint64_t vaddr, int64_t *sp)
{
	const uint8_t *d = go_table_once(f);
	int kind = d ? gopclntab_step(d, f->go_table_len, vaddr, sp) : -ENOENT;

	return kind < 0 ? -ENOENT : kind;
}

static int go_boundary(void *arg, uint64_t pc)
{
	return u64vec_push(arg, pc);
}

int sym_table_go_boundaries(struct sym_file *f, struct u64vec *out)
{
	const uint8_t *d = go_table_once(f);
	int rc = d ? gopclntab_boundaries(d, f->go_table_len, go_boundary, out) : 0;

	return rc == -ENOMEM ? rc : 0;
}

/* Whether name is a function the file defines, by the filter of
 * build_symbols(). */
static int defined_code(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
	int type = name ? GELF_ST_TYPE(sym->st_info) : STT_SECTION;

	/* Only code symbols name code: an address in data, or under a
	 * linker warning "symbol", is unknown rather than that. */
	return name && *name && (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE) &&
	       shndx != SHN_UNDEF && shndx != SHN_ABS && shndx != (GElf_Word)-1;
}

/*
 * A Go binary whose symbols name fewer functions than its table does
 * (one stripped with -ldflags=-s, as distributions ship them, keeps only
 * the dynamic symbols of cgo): its functions from that table, which the
 * Go runtime keeps for its own tracebacks. Names point into the section,
 * which lives with the module. Returns 1 when the table was used.
 */
static int build_go_symbols(struct sym_file *f, int nsyms)
{
	const uint8_t *d = go_table_once(f);
	struct go_fill g = {f, 0, 0};
	int defined = 0;

	if (!d || gopclntab_functions(d, f->go_table_len, go_count, &g) <= 0)
		return 0; /* not a table this reader knows */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
		    dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
		defined += defined_code(name, &sym, shndx);
	}
	if ((uint32_t)defined >= g.cap)
		return 0;
	f->sym_names = calloc(g.cap, sizeof(*f->sym_names));
	f->sym_shown = calloc((size_t)g.cap * 2, sizeof(*f->sym_shown));
	if (!f->sym_names || !f->sym_shown)
		return -ENOMEM;
	int rc = gopclntab_functions(d, f->go_table_len, go_add, &g);
	if (rc < 0 && rc != -EINVAL)
		return rc;
	rc = ranges_finish(&f->syms, 0);
	f->syms_go = rc == 0;
	return rc < 0 ? rc : 1;
}

static int build_symbols(struct sym_file *f)
{
	int nsyms = dwfl_module_getsymtab(f->mod);
	struct loose_sym *loose = NULL;
	size_t nloose = 0;
	int rc = 0;

	f->syms_built = 1;
	rc = build_go_symbols(f, nsyms);
	if (rc != 0 || nsyms <= 1)
		return rc < 0 ? rc : 0;
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
		if (!defined_code(name, &sym, shndx))
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
int sym_table_find(struct sym_file *f, uint64_t vaddr, uint32_t *idx)
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
const char *sym_table_display_name(struct symbolizer *s, const char *sys)
{
	const char *at = strchr(sys, '@');
	const char *base = at ? strpool_intern_len(&s->strings, sys, (size_t)(at - sys)) : sys;

	return base ? sym_name_demangled(s, base) : NULL;
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

/* Symbol i's name if it is a function defined in the file (not an import,
 * not absolute), with *sym and its address; else NULL. */
static const char *defined_function(struct sym_file *f, int i, GElf_Sym *sym, GElf_Addr *addr)
{
	GElf_Word shndx;
	const char *name = dwfl_module_getsym_info(f->mod, i, sym, addr, &shndx, NULL, NULL);
	int type = name ? GELF_ST_TYPE(sym->st_info) : STT_NOTYPE;

	if (!name || (type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF ||
	    shndx == (GElf_Word)-1 || *addr == 0)
		return NULL;
	return name;
}

/* Whether f's functions are a Go table's (the table built first): then
 * the lookups by name below go through it, not the ELF symbols. */
static int go_functions(struct sym_file *f)
{
	uint32_t idx;

	return sym_table_find(f, 0, &idx) >= 0 && f->syms_go;
}

int symbolizer_find_symbol(struct symbolizer *s, struct sym_file *f, const char *name,
			   uint64_t *vaddr, uint64_t *size)
{
	int nsyms, best = 0;

	if (!s || !f || !name || !vaddr)
		return -EINVAL;
	if (go_functions(f)) {
		for (size_t i = 0; i < f->syms.n; i++) {
			const struct range *r = &f->syms.v[i];
			if (strcmp(f->sym_names[r->idx], name) == 0) {
				*vaddr = r->lo;
				if (size)
					*size = r->hi - r->lo;
				return 0;
			}
		}
		return -ENOENT;
	}
	nsyms = dwfl_module_getsymtab(f->mod);
	for (int i = 1; i < nsyms && best < 3; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *symname = defined_function(f, i, &sym, &addr);

		if (!symname)
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

int symbolizer_find_object(struct sym_file *f, const char *name, uint64_t *vaddr, uint64_t *size)
{
	int nsyms = f && name && vaddr ? dwfl_module_getsymtab(f->mod) : -1;

	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *symname =
		    dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!symname || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || shndx == SHN_UNDEF ||
		    addr == 0 || strcmp(symname, name) != 0)
			continue;
		*vaddr = addr;
		if (size)
			*size = sym.st_size;
		return 0;
	}
	return -ENOENT;
}

static int by_address(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* f's IFUNC addresses, sorted, made once: a trace of every function of
 * a library asks of each, and a walk of its symbols each time made that
 * quadratic (three quarters of tracing all of libc's start). Returns 0
 * or -ENOMEM. */
static int build_ifuncs(struct sym_file *f)
{
	int nsyms = dwfl_module_getsymtab(f->mod);
	size_t cap = 0;

	f->nifuncs = 0; /* a build cut short by memory starts over */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		if (!defined_function(f, i, &sym, &addr) || GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		uint64_t *grown = array_reserve(f->ifuncs, &cap, f->nifuncs + 1, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		f->ifuncs = grown;
		f->ifuncs[f->nifuncs++] = addr;
	}
	if (f->nifuncs)
		qsort(f->ifuncs, f->nifuncs, sizeof(*f->ifuncs), by_address);
	f->ifuncs_built = 1;
	return 0;
}

int symbolizer_is_ifunc(struct sym_file *f, uint64_t vaddr)
{
	if (!f || (!f->ifuncs_built && build_ifuncs(f) < 0))
		return 0;
	return f->nifuncs &&
	       bsearch(&vaddr, f->ifuncs, f->nifuncs, sizeof(*f->ifuncs), by_address) != NULL;
}

const char *symbolizer_function_at(struct sym_file *f, uint64_t vaddr, uint64_t *size)
{
	int nsyms = f ? dwfl_module_getsymtab(f->mod) : -1;
	const char *best = NULL;

	if (f && go_functions(f)) {
		const struct range *r = ranges_find(&f->syms, vaddr);
		if (!r || r->lo != vaddr)
			return NULL;
		*size = r->hi - r->lo;
		return f->sym_names[r->idx];
	}
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = defined_function(f, i, &sym, &addr);
		/* The first global name, else the first name. */
		if (!name || addr != vaddr || (best && GELF_ST_BIND(sym.st_info) != STB_GLOBAL))
			continue;
		best = name;
		*size = sym.st_size;
		if (GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
			break;
	}
	return best;
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
	if (go_functions(f)) {
		for (size_t i = 0; i < f->syms.n; i++) {
			const struct range *r = &f->syms.v[i];
			int rc = fn(f->sym_names[r->idx], r->lo, r->hi - r->lo, ctx);
			if (rc)
				return rc;
		}
		return 0;
	}
	nsyms = dwfl_module_getsymtab(f->mod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = defined_function(f, i, &sym, &addr);

		if (!name)
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
