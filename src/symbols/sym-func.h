/*
 * A function's DWARF, found from its entry address: the subprogram DIE
 * that describes it (trace reads its parameters there), and its signature
 * as text ("unsigned long long (unsigned int)"), which hot patching
 * compares between the function it replaces and its replacement, and
 * the shape of its calls (where its result comes back, how many bytes of
 * arguments it may take on the stack), which patching's thunk needs.
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

/* What the calling convention makes of a function's result and
 * arguments, from its DWARF. */
enum sym_ret_kind {
	SYM_RET_VOID,
	SYM_RET_INT,	    /* integer or pointer: rax (rdx too above 8 bytes) */
	SYM_RET_FLOAT,	    /* float, double, complex: xmm0 (xmm1 too above 8 bytes) */
	SYM_RET_LONG_FLOAT, /* long double, __float128, complex long double: x87 or xmm0 */
	SYM_RET_VECTOR,	    /* a vector type: xmm0, ymm0 or zmm0 */
	SYM_RET_AGGREGATE,  /* struct, union, class, array: rax/rdx/xmm0/xmm1, or memory */
};

struct sym_func_shape {
	enum sym_ret_kind ret;
	int ret_bytes;
	/* At most this many bytes of arguments on the stack: every
	 * parameter's size rounded up to 8, as if none had a register. */
	uint32_t arg_bytes;
	int variadic; /* "..." */
};

/* The shape of the function at vaddr of f. Returns 0, or what
 * sym_func_die() returns. */
int sym_func_shape(struct sym_file *f, uint64_t vaddr, struct sym_func_shape *out);

#endif
