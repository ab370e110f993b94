/*
 * Inside the symbolizer (see symbolize.h), shared by its three files:
 * symbolize.c opens files and answers lookups, sym-dwarf.c finds
 * functions, inline chains and lines in DWARF, sym-table.c in the ELF
 * symbol table. Nothing outside src/symbols/ includes this.
 */
#ifndef RECCE_SYM_FILE_H
#define RECCE_SYM_FILE_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "symbols/gopclntab.h"
#include "symbols/symbolize.h"
#include "util/ranges.h"
#include "util/strpool.h"
#include "util/u64map.h"

/* Deepest inline chain we report, and deepest DIE nesting we walk: real
 * code stays far below both; hostile DWARF does not get more. */
#define MAX_FRAMES    64
#define MAX_DIE_DEPTH 256
/* The vDSO is a few pages; refuse to copy anything claiming to be huge. */
#define VDSO_MAX_SIZE (1 << 20)

struct sym_cache;

/* A growing list of addresses: where a binary's answers may change. */
struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

int u64vec_push(struct u64vec *a, uint64_t x);

struct load_seg {
	uint64_t offset, filesz, vaddr;
	uint64_t flags; /* p_flags: PF_X, PF_W, PF_R */
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
	int syms_go;	    /* syms are .gopclntab's functions (sym-table.c), not ELF symbols */
	const uint8_t *go_table; /* Go's function table (sym-table.c), or NULL */
	size_t go_table_len;
	uint64_t go_table_vaddr;
	uint64_t go_gofunc; /* moduledata.gofunc, for inlined calls; 0: none */
	int go_table_tried;

	uint64_t *ifuncs; /* the addresses of its IFUNC symbols, sorted, once ifuncs_built */
	size_t nifuncs;
	int ifuncs_built;

	struct ranges fdes;	/* .eh_frame's function ranges, for code without symbols */
	const char **fde_names; /* [i]: the interned name of fdes.v[i], made on need */
	int fdes_built;
	uint32_t *fde_parent; /* [i]: cold-parts.c's answer for fdes.v[i], once cold_built */
	int cold_built;

	struct sym_cache *cache; /* the table of every answer, when there is one */
	int cache_tried;	 /* loading or building it was tried */
	uint64_t source;	 /* sym_file_source(), once source_done */
	uint32_t source_owner;
	int source_done;

	struct u64map addr_cache; /* vaddr -> first frame << 8 | count */
	struct sym_frame *frames;
	size_t nframes, frames_cap;

	struct u64map cu_by_offset; /* unit DIE offset -> struct cu_index * */
	struct cu_index *cus;
	struct ranges span_ranges; /* idx: spans[]; built on an aranges miss */
	struct cu_span *spans;
	int spans_built;

	int in_use; /* marked since the last symbolizer_sweep() */
};

struct symbolizer {
	struct sym_file *files;
	struct u64map files_by_inode; /* hash of (dev, ino) -> struct sym_file * */
	struct sym_file *vdso;
	struct strpool strings;
	struct u64map demangled;   /* interned mangled name -> interned demangled */
	struct u64map by_build_id; /* interned build-id -> struct sym_file * or 0 */
	char *debuginfo_path;	   /* NULL: elfutils' default search path */
	char *cache_dir;	   /* of tables by build-id; NULL: none kept */
	uint64_t cache_max;	   /* bytes the tables in cache_dir may take */
	uint64_t cache_build_max;  /* largest binary a table is built for */
	Dwfl_Callbacks callbacks;
};

/* The interned demangled form of an interned name (itself if it is not
 * mangled), computed once per name. NULL only when memory runs out. */
const char *sym_name_demangled(struct symbolizer *s, const char *name);
/* Loads DWARF (from the file or a separate debug file) on first need;
 * 1 when the file has it. */
int sym_file_load_dwarf(struct sym_file *f);

/* All frames for vaddr, innermost first, into out[cap], without the
 * per-address cache or the table: what both are filled from. */
int sym_resolve(struct symbolizer *s, struct sym_file *f, uint64_t vaddr, struct sym_frame *out,
		int cap);
/* What f holds, as one number: a hash of every byte of the file, taken
 * once. Copies of a binary with one build-id but other symbols (stripped,
 * with MiniDebugInfo, with debug info), or a file made to claim another's
 * build-id, differ in it, so the symbol cache tells their tables apart.
 * 0 when the file does not read (then no table is kept or used). With
 * owner, also the uid that owns the file. */
uint64_t sym_file_source(struct sym_file *f, uint32_t *owner);
/* Adds where f's symbols and .eh_frame entries start and end. */
int sym_boundaries(struct sym_file *f, struct u64vec *out);

/* cold-parts.c */

/* Whether fde (an unnamed range of f->fdes) is a cold part of a named
 * function: 1 with its index in f->sym_names in *function, 0, or -ENOMEM.
 * The first call decodes f's code. */
int sym_cold_parent(struct sym_file *f, const struct range *fde, uint32_t *function);

/* sym-dwarf.c */
/* Adds where f's units, functions, inlined calls and line rows start and
 * end (DWARF must be loaded). */
int sym_dwarf_boundaries(struct sym_file *f, struct u64vec *out);
int sym_dwarf_frames(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		     struct sym_frame *out, int cap, int *complete);
void sym_cu_index_free(struct cu_index *ci);
/* The unit .debug_aranges names for vaddr, if that unit's own ranges hold
 * it (bias into *bias); NULL if none does. */
Dwarf_Die *sym_aranges_unit(Dwfl_Module *mod, uint64_t vaddr, Dwarf_Addr *bias);

/* sym-file.c */
/* The section of f's ELF file named name (its header into *sh), or NULL. */
Elf_Scn *sym_file_find_section(const struct sym_file *f, const char *name, GElf_Shdr *sh);
/* The n bytes at virtual address vaddr of f's ELF file, from the section
 * that holds them all: 0, or -ENOENT. */
int sym_file_read_vaddr(void *f, uint64_t vaddr, void *buf, size_t n);

/* sym-table.c */
int sym_table_find(struct sym_file *f, uint64_t vaddr, uint32_t *idx);
/* A Go binary's frames at vaddr from its .gopclntab (when DWARF has
 * none: a binary built with -ldflags=-w): the calls inlined there, then
 * the function, innermost first, names and files pointing into the
 * section (gopclntab_frames()). How many, or -ENOENT. */
int sym_table_go_frames(struct sym_file *f, uint64_t vaddr, struct gopclntab_frame *out, int cap);
/* How a walk steps out of the Go frame at vaddr (gopclntab_step(): an
 * enum gopclntab_step, *sp for a frame), or -ENOENT when the file has
 * no Go function there. */
int sym_table_go_step(struct sym_file *f, uint64_t vaddr, int64_t *sp);
/* Adds where a Go binary's lines and inlined calls change (none for
 * another binary). */
int sym_table_go_boundaries(struct sym_file *f, struct u64vec *out);
const char *sym_table_display_name(struct symbolizer *s, const char *sys);

#endif
