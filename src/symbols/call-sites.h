/*
 * Callers that rely on more than the calling convention: GCC's -fipa-ra
 * (on at -O2) lets a caller in the same unit keep a value in a
 * call-clobbered register across a call when it can see that the callee
 * leaves that register alone. Replacing the callee then breaks the
 * caller. This finds such callers by their machine code: after each
 * direct call to the function, a call-clobbered register (general or
 * vector, other than the ones that carry the return value) read before
 * anything writes it.
 *
 * The check follows the straight line of code after each call (through
 * conditional jumps, up to the next unconditional jump, return or other
 * call), which is where the compiler puts such uses in practice; it does
 * not prove their absence further on.
 */
#ifndef RECCE_SYMBOLS_CALL_SITES_H
#define RECCE_SYMBOLS_CALL_SITES_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct sym_file;

struct call_site_hazard {
	const char *caller; /* the calling function's name (the symbolizer's) */
	uint64_t offset;    /* of the reading instruction, from the caller's start */
	char reg[8];	    /* the register read: "rcx", "xmm1" */
};

/* Scans every function of f for direct calls to the function at vaddr
 * whose caller reads a call-clobbered register it did not set after the
 * call. ret_wide: the return value also takes rdx (or xmm1); ret_float:
 * it is in xmm0. Returns 1 with *h filled, 0, or -errno. */
int call_sites_keep_registers(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
			      int ret_float, int ret_wide, struct call_site_hazard *h);

#endif
