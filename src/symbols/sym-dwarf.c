/*
 * The symbolizer's DWARF side (see sym-file.h): which unit covers an
 * address (through .debug_aranges, or the units' own ranges where a
 * compiler left that out), an index per unit of every subprogram and
 * inlined subroutine with its ranges, and from those the inline chain and
 * file:line of an address.
 */
#include "symbols/sym-file.h"

#include "util/array.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sym_cu_index_free(struct cu_index *ci)
{
	free(ci->funcs);
	ranges_release(&ci->ranges);
	free(ci);
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

/*
 * A Go program linked by the system's linker (cgo, -linkmode=external)
 * has .debug_aranges for its C units only, and libdw then names one of
 * them for any address past their start: every Go function's line would
 * be in runtime/cgo's gcc_mmap.c. A unit that states its ranges and
 * holds no range with vaddr is not taken.
 */
Dwarf_Die *sym_aranges_unit(Dwfl_Module *mod, uint64_t vaddr, Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(mod, vaddr, bias);
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int stated = 0;

	while (d && (off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0) {
		if (vaddr - *bias >= lo && vaddr - *bias < hi)
			return d;
		stated = 1;
	}
	return stated ? NULL : d;
}

/* Finds the unit covering vaddr: 1 and *cu, *bias; 0 if none; -errno. */
static int find_cu(struct sym_file *f, uint64_t vaddr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf_Die *d = sym_aranges_unit(f->mod, vaddr, bias);
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
		sym_cu_index_free(ci);
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
		fn->name = fn->system_name ? sym_name_demangled(s, fn->system_name) : NULL;
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
 * Whether inlined function fn is a copy of the function it sits in,
 * placed at that function's head: what a compiler leaves after splitting
 * a function and inlining the part back, as glibc's read() is built (its
 * slow path is "__libc_read inlined at read.c:24 into __libc_read", and
 * read is an alias of that address). One call, so one frame; a recursive
 * call inlined into its own body sits below the head and stays two.
 */
static int inlined_into_itself(struct symbolizer *s, struct cu_index *ci, const struct cu_func *fn)
{
	int decl;

	if (fn->parent < 0 || !fn->system_name)
		return 0;
	struct cu_func *p = &ci->funcs[fn->parent];
	if (cu_func_resolve(s, ci, p) < 0 || p->system_name != fn->system_name)
		return 0;
	return dwarf_decl_line(&p->die, &decl) == 0 && fn->call_line >= decl &&
	       fn->call_line <= decl + 1;
}

/*
 * Frames from DWARF, innermost first: the innermost function gets the
 * line table's file:line for the address, each enclosing one the call
 * site of the function inlined into it (a function inlined into its own
 * head is one frame: see inlined_into_itself()). *complete tells whether the chain
 * reached the real (out-of-line) function. Returns the count or -errno.
 */
int sym_dwarf_frames(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
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
		if (fn->inlined && inlined_into_itself(s, ci, fn)) {
			fi = fn->parent; /* the same call: keep the innermost line */
			continue;
		}
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

/* ---- boundaries, for the symbol cache ---- */

static int add_range_bounds(struct u64vec *out, const struct ranges *r, uint64_t bias)
{
	for (size_t i = 0; i < r->n; i++)
		if (u64vec_push(out, r->v[i].lo + bias) < 0 || u64vec_push(out, r->v[i].hi + bias) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * Every address where sym_dwarf_frames() may answer differently from the
 * address before it: the ends of the units (as .debug_aranges and the
 * units themselves give them), of every function and inlined call in the
 * units' indexes, and every line-table row.
 */
int sym_dwarf_boundaries(struct sym_file *f, struct u64vec *out)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
	Dwarf_Aranges *ar;
	size_t nar;
	Dwarf_Die *cu = NULL;
	int rc;

	if (!dw)
		return 0;
	if (dwarf_getaranges(dw, &ar, &nar) == 0)
		for (size_t i = 0; i < nar; i++) {
			Dwarf_Addr start;
			Dwarf_Word len;
			Dwarf_Off off;
			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off) == 0 &&
			    (u64vec_push(out, start + bias) < 0 ||
			     u64vec_push(out, start + len + bias) < 0))
				return -ENOMEM;
		}
	while ((cu = dwfl_module_nextcu(f->mod, cu, &bias)) != NULL) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Lines *lines;
		ptrdiff_t off = 0;
		size_t nlines;
		struct cu_index *ci;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
			if (u64vec_push(out, lo + bias) < 0 || u64vec_push(out, hi + bias) < 0)
				return -ENOMEM;
		if ((rc = cu_index_get(f, cu, &ci)) < 0)
			return rc;
		if ((rc = add_range_bounds(out, &ci->ranges, bias)) < 0)
			return rc;
		if (dwarf_getsrclines(cu, &lines, &nlines) != 0)
			continue;
		for (size_t i = 0; i < nlines; i++) {
			Dwarf_Addr a;
			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0 &&
			    u64vec_push(out, a + bias) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}
