/*
 * The arguments of a USDT probe hit (symbols/usdt.h places them): named
 * arg0, arg1... as bpftrace names them, or as the pattern names them,
 * an integer of the size and sign the note declares (an unsigned 8-byte
 * one, most often a pointer, in hex) unless the pattern gives a type
 * (`str`: the C string it points to), read from the registers at the
 * hit, a constant, or memory at a register plus a displacement.
 *
 * What is read from the target is read at the hit where the probe can
 * copy it (with BPF links, one copy a probe): two string arguments in
 * registers, else one memory operand. A memory operand not copied is
 * shown unknown, never read late from a stack that has moved on; a
 * string not copied is read when recce handles the hit (recce is then
 * woken on every hit, see tracer-uprobes.c).
 *
 * Ownership: values only.
 */
#ifndef RECCE_TRACE_USDT_ARGS_H
#define RECCE_TRACE_USDT_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace-args.h"
#include "trace/trace-event.h"
#include "trace/trace-pattern.h"

struct usdt_probe;

/* What a probe copies at the hit: the strings of the arguments str[0]
 * and str[1] (-1: none; both in registers), else the memory operand of
 * argument mem (-1: none). */
struct usdt_copy {
	int str[2];
	int mem;
};

/* The signature of probe u shown as spec says (NULL: as its note
 * says): known, its arguments (the first TRACE_MAX_ARGS), no return
 * value. */
void usdt_args_sig(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		   struct trace_sig *sig);

/* What the probe of u should copy at its hits, shown as spec says. */
void usdt_args_copy(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		    struct usdt_copy *c);

/* What a hit carried of it: the copied memory operand (obj, len bytes)
 * or the two strings (NULL when not copied). */
struct usdt_copied {
	const uint8_t *obj;
	size_t len;
	const char *str[2];
};

/* Fills r->args (and r->regs, r->nargs, r->arity) from the registers at
 * the hit (gpr by enum x86_gpr, the bits of have recorded), what the
 * probe copied (as usdt_args_copy() said), and strings not copied read
 * from pid (0: none may be). */
void usdt_args_fill(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		    const struct usdt_copy *plan, const struct usdt_copied *got,
		    const uint64_t *gpr, uint32_t have, pid_t pid, struct trace_record *r);

#endif
