/*
 * The symbolizer: turns an address inside an ELF file into frames with
 * function names and source file:line, inlined frames expanded, using
 * elfutils (libdwfl/libdw). Files are opened once and shared by every
 * process that maps them (cached by device and inode), so a fleet of
 * processes running one binary costs one symbol table.
 *
 * Addresses given to symbolizer_lookup() are ELF virtual addresses (the
 * link-time addresses of the file, as `nm` shows them); turn a runtime
 * address into one with sym_file_offset_to_vaddr() on its file offset
 * (address - mapping start + mapping offset).
 *
 * Separate debug files are found by build-id (/usr/lib/debug/.build-id/)
 * and by .gnu_debuglink. C++ and Rust names are demangled (Rust's hash
 * suffix is dropped). The [vdso] is symbolized from recce's own vDSO, which
 * is the same image for every process on this kernel.
 *
 * Names: inlined frames are named from DWARF; the outermost frame (the
 * function the code really is in) from the symbol table, which tells
 * clones such as "foo.cold" apart, without a symbol version ("memcpy" for
 * "memcpy@@GLIBC_2.14"; system_name keeps it). Of several symbols at one
 * address the public one wins ("qsort" over "__libc_qsort"). Only code
 * symbols name addresses: an address in data is unknown (0 frames).
 *
 * Ownership: every string returned (frames, paths, build-ids) is owned by
 * the symbolizer and lives until symbolizer_free(), or until the file it
 * came from is closed by symbolizer_sweep(). A sym_file is owned by the
 * symbolizer too. The symbolizer is not thread-safe.
 */
#ifndef RECCE_SYMBOLIZE_H
#define RECCE_SYMBOLIZE_H

#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct sym_file;

/* One frame; lookups return frames innermost first (inlined leaf first). */
struct sym_frame {
	const char *function;	 /* demangled name; NULL if no symbol covers the address */
	const char *system_name; /* name as in the symbol table; NULL if none */
	const char *file;	 /* source file; NULL if no line info */
	int line;		 /* 0 if unknown */
};

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/*
 * Opens an ELF file, or returns the cached one with the same device and
 * inode. fd, if >= 0, is an open descriptor of the file (for example from
 * /proc/PID/map_files/, which works even when the file was deleted); it is
 * duplicated, the caller keeps its own. path names the file in output and
 * is where the file is read from when fd < 0.
 * Returns 0 and *out, or -errno (-ENOEXEC if the file is not an ELF
 * executable or shared object). A file rewritten in place (same inode,
 * new size or time) is opened anew; the old sym_file stays valid.
 */
int symbolizer_open(struct symbolizer *s, const char *path, int fd, struct sym_file **out);

/*
 * Keeps a table of every answer per binary, by build-id, under dir (see
 * sym-cache.h): the first lookup in a binary reads its table from an
 * earlier run or builds it, later lookups are a binary search in it. A
 * table is built only for binaries of at most build_max bytes (0: any
 * size): building reads all of a binary's debug info, which a few lookups
 * in a huge binary would not. The tables in dir are kept under max_bytes
 * (0: 1 GiB). dir NULL turns it off (the default). Answers are the same
 * with and without. Returns 0 or -ENOMEM.
 */
int symbolizer_set_cache(struct symbolizer *s, const char *dir, uint64_t max_bytes,
			 uint64_t build_max);

/* Makes sure f has its table in the cache (building it if it is not
 * there), so that f can be symbolized later without the file: a
 * recording that keeps addresses only calls this for every binary it
 * saw. Returns 0, or -ENOENT when no table is kept (no cache, no
 * build-id, too big). */
int symbolizer_keep_table(struct symbolizer *s, struct sym_file *f);

/*
 * The binary with this build-id, for symbolizing a profile recorded
 * elsewhere or earlier: the file at path if it has that build-id (its
 * debug info found as symbolizer_open() finds it), else the table the
 * symbol cache kept of it (lookups and sym_file_offset_to_vaddr() work;
 * nothing else of the file is known). Each build-id is looked for once.
 * Returns 0 and *out, -ENOENT when neither is there, or -errno.
 */
int symbolizer_open_build_id(struct symbolizer *s, const char *build_id, const char *path,
			     struct sym_file **out);

/*
 * A file a process mapped that can no longer be opened as it was: the
 * process is gone and its path deleted, or holding another file by now
 * (the kernel gave its build-id with the mapping). The file open here
 * with that build-id (another copy, a run before) that root or owner
 * owns ((uid_t)-1: root alone; anyone can make a file claim a
 * build-id, and name another's code with it), else the table the
 * symbol cache kept of it; path names it. Returns 0 and *out, or -ENOENT.
 */
int symbolizer_open_gone(struct symbolizer *s, const char *build_id, const char *path,
			 uid_t owner, struct sym_file **out);

/* Whether a debuginfod server (DEBUGINFOD_URLS, which recce.c passes on
 * only when RECCE_DEBUGINFOD is set) let a search run into its timeout,
 * after which this process stopped asking servers. */
int symbolizer_debuginfod_stalled(void);

/*
 * For a symbolizer that lives for days (the continuous agent) beside
 * programs that come and go: each file it opened holds a descriptor and
 * its tables until it is closed. The caller marks every file still in
 * use with sym_file_mark(), then symbolizer_sweep() closes the others
 * when there are more than keep of them (the vDSO stays), and clears the
 * marks. Returns how many it closed. A closed file's sym_file and the
 * answers looked up in it are gone: call it where no one holds them.
 */
void sym_file_mark(struct sym_file *f);
size_t symbolizer_sweep(struct symbolizer *s, size_t keep);

/* How many files the symbolizer holds open. */
size_t symbolizer_files(const struct symbolizer *s);

/* The vDSO of this kernel, as a sym_file. Returns 0 or -errno. */
int symbolizer_open_vdso(struct symbolizer *s, struct sym_file **out);

const char *sym_file_path(const struct sym_file *f);
const char *sym_file_build_id(const struct sym_file *f); /* lowercase hex, "" if none */
int sym_file_fd(const struct sym_file *f);		 /* stays open for the symbolizer's life */
int sym_file_has_debuginfo(const struct sym_file *f);	 /* DWARF lines available */
int sym_file_is_go(const struct sym_file *f);		 /* built by Go's toolchain */
/* Whether f names its functions that are not exported too: it keeps a
 * symbol table (.symtab, or MiniDebugInfo's), DWARF was found for it, or
 * Go's own table names them. A stripped file (as Debian ships its
 * programs) names only what it exports. */
int sym_file_names_all(const struct sym_file *f);

/* ELF type of the file: ET_EXEC or ET_DYN (from <elf.h>). */
int sym_file_elf_type(const struct sym_file *f);

/* Converts a file offset into the ELF virtual address through the PT_LOAD
 * program headers. Returns 0, or -ENOENT if no loadable segment covers it. */
int sym_file_offset_to_vaddr(const struct sym_file *f, uint64_t offset, uint64_t *vaddr);

/* The ELF address at which a mapping of the file that begins at file
 * offset pgoff (len bytes, executable or not) begins: through the segment
 * that mapping was made for. A file page can hold the end of one segment
 * and the start of the next, each mapped at its own address (LLD's
 * layout: text at file offset 0x8a0 and address 0x18a0, the page at 0
 * mapped twice); of the segments the mapping's file range overlaps, the
 * one executable as the mapping is, then the first. Returns 0, or
 * -ENOENT. */
int sym_file_map_vaddr(const struct sym_file *f, uint64_t pgoff, uint64_t len, int exec,
		       uint64_t *vaddr);

/* The other way: the file offset of ELF address vaddr (where a uprobe
 * goes). Returns 0, or -ENOENT if no loadable segment holds it. */
int sym_file_vaddr_to_offset(const struct sym_file *f, uint64_t vaddr, uint64_t *offset);
/* The file offset where the last load segment overlapping the file
 * range [lo, hi) ends: past it, a mapping of that range holds only the
 * padding of the page. 0, or -ENOENT when no segment overlaps. */
int sym_file_segment_end(const struct sym_file *f, uint64_t lo, uint64_t hi, uint64_t *end);

/*
 * Resolves vaddr in f. Fills at most max frames, innermost first, and
 * returns how many (>= 1 when a symbol covers vaddr: a function name without
 * line info still gives one frame), 0 when nothing is known, -errno on error.
 * For a return address taken from a call stack, pass the address minus one
 * so the line is the call's, not the next statement's.
 */
int symbolizer_lookup(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		      struct sym_frame *frames, int max);

/* A hint that vaddr will be looked up in f soon. A table lookup waits on
 * memory more than it computes, so a caller with many addresses runs
 * faster announcing each a few lookups ahead. Does nothing without a
 * table (symbolizer_set_cache()) or before the first lookup in f. */
void symbolizer_prefetch(struct symbolizer *s, struct sym_file *f, uint64_t vaddr);

/* Looks a function symbol up by name in f: the name as in the symbol table
 * (a version suffix may be left out), else demangled, else demangled
 * without its parameter list ("ns::f" for "ns::f(int)"). Returns 0 and its
 * vaddr and size (size may be NULL), or -ENOENT. Used by tracing later. */
int symbolizer_find_symbol(struct symbolizer *s, struct sym_file *f, const char *name,
			   uint64_t *vaddr, uint64_t *size);

/* Looks a data symbol (STT_OBJECT) defined in f up by its exact name: a
 * runtime's state that a reader from outside starts at (CPython's
 * _PyRuntime). Returns 0 and its vaddr and size (size may be NULL), or
 * -ENOENT. */
int symbolizer_find_object(struct sym_file *f, const char *name, uint64_t *vaddr, uint64_t *size);

/* Whether a function symbol of f at vaddr is an IFUNC (STT_GNU_IFUNC):
 * the code there is a resolver the loader calls once, to choose the
 * implementation callers reach. */
int symbolizer_is_ifunc(struct sym_file *f, uint64_t vaddr);

/* The name of a function symbol of f that starts at vaddr (a global one
 * first), and its size into *size; NULL if none. */
const char *symbolizer_function_at(struct sym_file *f, uint64_t vaddr, uint64_t *size);

/* The function of f that holds vaddr, by its symbol (or Go's table) or
 * else by its .eh_frame entry: its range into [*lo, *hi). Returns 1, 0
 * when nothing says where a function is there, or -errno. */
int symbolizer_function_range(struct sym_file *f, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* Calls fn for every defined function symbol of f (name without its
 * version suffix, as the symbol table spells it; aliases each get a call).
 * A non-zero return from fn stops the walk and is returned; else 0. */
int symbolizer_foreach_function(struct symbolizer *s, struct sym_file *f,
				int (*fn)(const char *name, uint64_t vaddr, uint64_t size,
					  void *ctx),
				void *ctx);

/* The elfutils module of f (a Dwfl_Module *, whose addresses are ELF
 * vaddrs), for readers of DWARF beyond lines such as trace-args.c; owned
 * by the symbolizer. */
struct Dwfl_Module *sym_file_module(struct sym_file *f);

#endif
