/*
 * Trace patterns: `[OBJECT:]FUNCTION` with fnmatch(3) globs, such as
 * `old_fibonacci`, `ratchet:*fib*` or `libc.so.6:malloc`, resolved into the
 * functions to probe in every executable object of the target. OBJECT
 * matches a file's base name, or its name up to a dot ("libc" is
 * "libc.so.6"); without OBJECT every object is searched. A "::" belongs to
 * the function (C++ names), not to an object. A pattern without "::" also
 * matches a qualified name's last part, and one without '/' a Go name
 * without its package path's directories (`promql.(*Engine).exec`).
 *
 * Code without symbols is named by where it is: `OBJECT:0xADDRESS`, the
 * file address where a function starts (as `perf probe` and bpftrace
 * take it), and the name a report gives a function only .eh_frame knows,
 * `OBJECT!0xSTART-0xEND`, are patterns too.
 *
 * USDT probes are patterns of their own: `usdt:[OBJECT:]PROVIDER:NAME`
 * (`usdt:python:function__entry`, `usdt:libc:setjmp`, globs in each
 * part), as bpftrace writes them, with an optional list that names and
 * types the arguments from the first: `(query:str)`, `(file:str,
 * name:str, line)`, `(,size:hex)` (types str, int, uint, hex). `py:GLOB` names Python functions
 * (`py:app.handle_*`, `py:handle_*`): it resolves to the interpreter's
 * function__entry and function__return probes, and the glob is matched
 * against each call's `module.function` (or `function`, for a glob
 * without a dot) as the calls happen.
 *
 * Resolution keeps one probe per code address (aliases such as malloc and
 * __libc_malloc are one function), refuses more than max functions, and
 * for a pattern that matches nothing offers the nearest names by edit
 * distance.
 *
 * Ownership: the caller owns a struct trace_resolved and releases it with
 * trace_resolved_release(); the sym_files it names belong to the
 * symbolizer.
 */
#ifndef RECCE_TRACE_PATTERN_H
#define RECCE_TRACE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct sym_file;
struct usdt_probe;

#define TRACE_NEAREST 5

/* How a USDT pattern asks its arguments to be shown:
 * `usdt:postgresql:query__start(query:str)`. */
enum trace_usdt_type {
	TRACE_USDT_AS_NOTE, /* an integer of the note's size and sign */
	TRACE_USDT_STR,	    /* a pointer to a C string, shown as the string */
	TRACE_USDT_INT,
	TRACE_USDT_UINT,
	TRACE_USDT_HEX,
};

struct trace_usdt_spec {
	int n; /* arguments named or typed, from the first */
	struct {
		char name[24]; /* "" keeps argN */
		int type;      /* enum trace_usdt_type */
	} a[6];
};

enum trace_pattern_kind {
	TRACE_PATTERN_FUNCTION, /* [OBJECT:]FUNCTION */
	TRACE_PATTERN_USDT,	/* usdt:[OBJECT:]PROVIDER:NAME */
	TRACE_PATTERN_PY,	/* py:GLOB */
};

struct trace_pattern {
	int kind;	/* enum trace_pattern_kind */
	char *object;	/* NULL: any object */
	char *provider; /* TRACE_PATTERN_USDT: a glob */
	char *function; /* a glob, or the address as written; a probe's name (USDT) */
	int addressed;	/* the function is the one starting at addr */
	struct trace_usdt_spec spec; /* TRACE_PATTERN_USDT: its arguments */
	uint64_t addr;	/* a file address (ELF virtual address) */
};

/* Splits text into *p (copies). Returns 0, -EINVAL for an empty function
 * or object, an address without its object, a USDT pattern without
 * PROVIDER:NAME or an empty py: glob, -ENOMEM. */
int trace_pattern_parse(const char *text, struct trace_pattern *p);
void trace_pattern_release(struct trace_pattern *p);

/* Whether the object at path is named by p's object part. */
int trace_pattern_match_object(const struct trace_pattern *p, const char *path);

/* One function to probe. */
struct trace_fn {
	struct sym_file *file;
	char *path;		/* the object's path */
	char *object;		/* its base name */
	char *name;		/* as people write it: demangled, no parameters */
	char *symbol;		/* as the symbol table spells it */
	uint64_t vaddr, offset; /* ELF address and file offset of the entry */
	uint64_t size;		/* the symbol's size in bytes, 0 if unknown */
	int go;			/* Go code: its own ABI, goroutines move between threads */
	/* An IFUNC: the implementation the process resolved it to, probed
	 * instead of the resolver (its name), or "" when recce could not
	 * tell and the resolver itself is probed; NULL for other functions. */
	char *ifunc;
	int pattern; /* the first pattern that matched it */
	/* A USDT probe (its site is vaddr, offset), NULL for a function; and
	 * for the probes of a py: pattern, which of the two it is. */
	struct usdt_probe *usdt;
	int py; /* enum trace_py_probe */
};

enum trace_py_probe {
	TRACE_PY_NONE,
	TRACE_PY_ENTRY,
	TRACE_PY_RETURN,
	/* A probe that holds the `line` probe's semaphore up, on the site
	 * of a probe whose own semaphore stays down (so it never fires):
	 * CPython 3.11 reaches its function probes only while line tracing
	 * is on, and a probe on every line would trap on every line. */
	TRACE_PY_TRACING,
};

struct trace_resolved {
	struct trace_fn *fns;
	size_t n, cap;
	size_t total; /* distinct functions matched, kept or not */
	/* For each pattern, how many functions it matched, and the nearest
	 * names when it matched none. */
	size_t *matched;
	char *(*nearest)[TRACE_NEAREST];
	/* For each pattern of a function that matched none, the path of an
	 * object it searched that names only its exported functions (the
	 * first such), or NULL. */
	char **unnamed;
};

/* An object to search: an ELF file, the path it is known by and, for a
 * program run through a symlink, the path of the file itself (NULL when
 * the same); an object part of a pattern may name either. */
struct trace_object {
	struct sym_file *file;
	const char *path;
	const char *real_path;
};

/*
 * Resolves npat patterns against nobj objects into *out (zeroed first).
 * Returns 0; -E2BIG when more than max functions matched (out->total
 * says how many); -ENOENT when some pattern matched nothing
 * (out->matched and out->nearest say which and what is near); -ENOMEM.
 */
int trace_resolve(struct symbolizer *s, const struct trace_pattern *pats, size_t npat,
		  const struct trace_object *objs, size_t nobj, size_t max,
		  struct trace_resolved *out);
void trace_resolved_release(struct trace_resolved *r, size_t npat);

/* Levenshtein distance of a and b, capped at cap (cheap early exit). */
size_t trace_edit_distance(const char *a, const char *b, size_t cap);

#endif
