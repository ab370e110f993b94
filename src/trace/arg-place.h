/*
 * Where each argument of a traced function is at its first instruction,
 * where the probe fires: the register DWARF's location names there, or,
 * where DWARF names a stack slot the prologue fills later (-O0) or says
 * nothing, the register the SysV x86-64 ABI or Go's register ABI gives
 * it, aggregates passed by value included. A place DWARF states beats the
 * ABI's: LLVM drops and reorders the arguments of an internal function
 * without renaming it. An argument with no place found carries the
 * reason (enum trace_arg_why).
 *
 * Ownership: struct arg_assign is a caller-allocated value that walks one
 * function's parameters in order.
 */
#ifndef RECCE_TRACE_ARG_PLACE_H
#define RECCE_TRACE_ARG_PLACE_H

#include <elfutils/libdw.h>
#include <stdint.h>

/* Go's integer argument registers: rax rbx rcx rdi rsi r8 r9 r10 r11. */
#define TRACE_GO_REGS 9

/* The SysV integer argument registers rdi rsi rdx rcx r8 r9, as enum
 * x86_gpr. */
extern const uint8_t arg_sysv_regs[6];

struct arg_assign {
	int next, nregs;      /* the next of the ABI's registers, of nregs */
	int certain;	      /* every argument before was placed */
	int go;		      /* Go's ABI, else SysV's */
	const uint8_t *order; /* the ABI's registers, as enum x86_gpr */
	Dwarf_Addr entry;     /* the function's first byte, in DWARF's addresses */
	int llvm_internal;    /* built by LLVM (clang, rustc), internal linkage */
	int lang;	      /* DW_LANG_* of the function's unit, -1 if not known */
};

/* Starts the walk of sub's parameters (the function at file address
 * vaddr), under Go's ABI if go; first registers are taken already (1 for
 * the hidden pointer of a result returned in memory). */
void arg_assign_init(struct arg_assign *ra, Dwarf_Die *sub, uint64_t vaddr, int go, int first);

/* Places the next parameter, param, of kind (enum trace_arg_kind, as its
 * type classifies). Sets *reg (enum x86_gpr, -1 if none), *len_reg (the
 * length of a string given as a pointer and a length, else -1) and *why
 * (enum trace_arg_why when *reg is -1). Returns the kind to show it as:
 * TRACE_ARG_STR for such a string, TRACE_ARG_UNKNOWN when not placed. */
uint32_t arg_place(struct arg_assign *ra, Dwarf_Die *param, uint32_t kind, int *reg, int *len_reg,
		   int *why);

/* Go's register ABI for results (from RAX, as for arguments, with no
 * DWARF place to consult): the next result, param, of kind. Sets *reg and
 * *reg2 (the second word of a string or interface, else -1) and *iface
 * (an interface: a type word and a data word). Returns the kind to show
 * it as: TRACE_ARG_STR for a string, TRACE_ARG_UNKNOWN when it is in no
 * integer register (a float, an aggregate, one past the registers). */
uint32_t arg_place_go_result(struct arg_assign *ra, Dwarf_Die *param, uint32_t kind, int *reg,
			     int *reg2, int *iface);

/* The registers a probe that records only the SysV argument registers
 * has (trace --fast), as a mask of enum x86_gpr bits. */
uint32_t arg_sysv_mask(void);

/* DWARF helpers shared with trace-args.c. */
int arg_peel_type(Dwarf_Die *type);		      /* typedefs and qualifiers off; the tag */
int arg_is_float(Dwarf_Die *die);		      /* die's type is float or double */
int arg_member_offset(Dwarf_Die *m, Dwarf_Word *off); /* a constant member offset */

#endif
