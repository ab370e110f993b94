/*
 * An allocator's functions, by symbol (see alloc-fns.h).
 */
#include "sampling/alloc-fns.h"

#include "perf/alloc-format.h"
#include "symbols/symbolize.h"

static const struct {
	const char *name;
	uint8_t kind;
} fns[] = {
    {"malloc", ALLOC_FN_MALLOC},
    {"calloc", ALLOC_FN_CALLOC},
    {"realloc", ALLOC_FN_REALLOC},
    {"free", ALLOC_FN_FREE},
    {"aligned_alloc", ALLOC_FN_ALIGNED},
    {"memalign", ALLOC_FN_ALIGNED},
    {"posix_memalign", ALLOC_FN_POSIX_MEMALIGN},
    {"valloc", ALLOC_FN_MALLOC},
    {"pvalloc", ALLOC_FN_MALLOC},
    /* jemalloc's own interface */
    {"mallocx", ALLOC_FN_MALLOC},
    {"rallocx", ALLOC_FN_REALLOC},
    {"dallocx", ALLOC_FN_FREE},
    {"sdallocx", ALLOC_FN_FREE},
    /* operator new and delete, where the allocator itself defines them
     * (libstdc++'s call malloc, and are not hooked) */
    {"_Znwm", ALLOC_FN_MALLOC},
    {"_Znam", ALLOC_FN_MALLOC},
    {"_ZnwmRKSt9nothrow_t", ALLOC_FN_MALLOC},
    {"_ZnamRKSt9nothrow_t", ALLOC_FN_MALLOC},
    {"_ZdlPv", ALLOC_FN_FREE},
    {"_ZdaPv", ALLOC_FN_FREE},
    {"_ZdlPvm", ALLOC_FN_FREE},
    {"_ZdaPvm", ALLOC_FN_FREE},
};
_Static_assert(sizeof(fns) / sizeof(fns[0]) <= ALLOC_FNS_MAX, "ALLOC_FNS_MAX");

size_t alloc_fns_find(struct symbolizer *sym, struct sym_file *f, struct alloc_fn *out)
{
	uint64_t vaddr, size;
	size_t n = 0;

	if (symbolizer_find_symbol(sym, f, "malloc", &vaddr, NULL) < 0)
		return 0;
	uint16_t flags =
	    symbolizer_find_symbol(sym, f, "__libc_malloc", &vaddr, NULL) == 0 ? ALLOC_FN_GLIBC : 0;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t off;
		int dup = 0;
		if (symbolizer_find_symbol(sym, f, fns[i].name, &vaddr, &size) < 0 ||
		    sym_file_vaddr_to_offset(f, vaddr, &off) < 0)
			continue;
		for (size_t j = 0; j < n && !dup; j++)
			dup = out[j].offset == off; /* an alias: memalign is aligned_alloc */
		if (dup)
			continue;
		out[n++] = (struct alloc_fn){fns[i].name, vaddr, off, size, fns[i].kind | flags};
	}
	return n;
}
