/*
 * A function's DWARF, found from its entry address: the subprogram DIE
 * that describes it (trace reads its parameters there), and its signature
 * as text ("unsigned long long (unsigned int)"), which hot patching
 * compares between the function it replaces and its replacement.
 *
 * Ownership: a Dwarf_Die is a value pointing into the file's DWARF, valid
 * while the symbolizer keeps the file open.
 */
#ifndef RECCE_SYMBOLS_SYM_FUNC_H
#define RECCE_SYMBOLS_SYM_FUNC_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

struct sym_file;

/* Finds the DW_TAG_subprogram whose code starts at vaddr of f. Returns 0,
 * -ENODATA when f has no DWARF for that address, or -ENOENT when its
 * DWARF does not describe a function starting there. */
int sym_func_die(struct sym_file *f, uint64_t vaddr, Dwarf_Die *sub);

/* The signature of the function at vaddr of f, written to buf as its
 * return type and parameter types with typedefs and qualifiers looked
 * through, "void (char *, int)", the parts the calling convention sees.
 * Returns 0, or what sym_func_die() returns. */
int sym_func_signature(struct sym_file *f, uint64_t vaddr, char *buf, size_t len);

/* How the function at vaddr of f returns: *is_float when in xmm0, *bytes
 * the size of the value (0 for void). Returns 0, or what sym_func_die()
 * returns. */
int sym_func_returns(struct sym_file *f, uint64_t vaddr, int *is_float, int *bytes);

#endif
