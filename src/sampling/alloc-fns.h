/*
 * An allocator's functions, by symbol: the C ones, jemalloc's *allocx,
 * and the C++ operators when the allocator defines them itself (the
 * libstdc++ ones call malloc). Both ways of sampling allocations hook
 * these: the kernel's program (alloc-probes) and the in-process
 * recorder (alloc-fast).
 */
#ifndef RECCE_SAMPLING_ALLOC_FNS_H
#define RECCE_SAMPLING_ALLOC_FNS_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct sym_file;

#define ALLOC_FNS_MAX 24

struct alloc_fn {
	const char *name;
	uint64_t vaddr, offset, size; /* in the file */
	uint16_t kind;		      /* enum alloc_fn_kind, | ALLOC_FN_GLIBC for glibc's */
};

/* The allocation functions f defines, if it defines malloc, into out
 * (ALLOC_FNS_MAX at most; an alias of one already listed is left out).
 * Returns how many, 0 when f is no allocator. */
size_t alloc_fns_find(struct symbolizer *sym, struct sym_file *f, struct alloc_fn *out);

#endif
