/*
 * The arguments of a USDT probe hit (symbols/usdt.h places them): named
 * arg0, arg1... as bpftrace names them, an integer of the size and sign
 * the note declares (an unsigned 8-byte one, most often a pointer, in
 * hex), read from the registers at the hit, a constant, or memory at a
 * register plus a displacement. Memory is read only as the probe copied
 * it at the hit (one operand per probe, with BPF links): the stack it
 * points into has moved on by the time recce handles the hit, so any
 * other memory operand is shown unknown, never read late.
 *
 * Ownership: values only.
 */
#ifndef RECCE_TRACE_USDT_ARGS_H
#define RECCE_TRACE_USDT_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-args.h"
#include "trace/trace-event.h"

struct usdt_probe;

/* The signature of probe u: known, its arguments (the first
 * TRACE_MAX_ARGS), no return value. */
void usdt_args_sig(const struct usdt_probe *u, struct trace_sig *sig);

/* The memory operand of u a probe should copy at the hit: its index,
 * or -1 when it has none. */
int usdt_args_captured(const struct usdt_probe *u);

/* Fills r->args (and r->regs, r->nargs, r->arity) from the registers at
 * the hit (gpr by enum x86_gpr, the bits of have recorded) and the
 * memory operand usdt_args_captured() names as copied then (obj, len
 * bytes; NULL when not copied). */
void usdt_args_fill(const struct usdt_probe *u, const uint64_t *gpr, uint32_t have,
		    const uint8_t *obj, size_t len, struct trace_record *r);

#endif
