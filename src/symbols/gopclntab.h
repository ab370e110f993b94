/*
 * Go's function table (.gopclntab), which every Go binary keeps even when
 * stripped of its symbols: the runtime needs it for its own tracebacks.
 * Read here for what `go tool pprof` reads it for: the name and the
 * address range of every function, so that a stripped Go program (as
 * distributions ship them) is profiled by name. Formats of Go 1.2
 * through 1.24 (magics 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1);
 * the table is the binary's, so it is untrusted: every offset is checked
 * against its length.
 */
#ifndef RECCE_SYMBOLS_GOPCLNTAB_H
#define RECCE_SYMBOLS_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* Calls fn(arg, lo, hi, name) for each function of the table of len
 * bytes at data (the section's contents; addresses are the binary's
 * virtual addresses), name pointing into data, NUL-terminated. Stops at
 * fn's first non-zero return and returns it; else the number of
 * functions, or -EINVAL when data is not a table this reader knows. */
int gopclntab_functions(const uint8_t *data, size_t len,
			int (*fn)(void *arg, uint64_t lo, uint64_t hi, const char *name),
			void *arg);

/* The source file and line of the instruction at pc (a virtual address)
 * in the table of len bytes at data: 0, *file pointing into data, or
 * -ENOENT (no function there, or no line for pc), -ENOTSUP (a Go 1.2-1.15
 * table: names only), -EINVAL (not a table this reader knows, or one
 * whose line tables are out of bounds). */
int gopclntab_line(const uint8_t *data, size_t len, uint64_t pc, const char **file, int *line);

#endif
