/*
 * Unwinding rules of x86-64 code in their common form, cached by program
 * counter or by a key of the caller's, for the fast path of the DWARF
 * unwinder (unwind.c).
 *
 * Almost every row of a compiler's call frame information says: the CFA
 * is rsp or rbp plus a constant, the return address is saved at CFA plus
 * a constant, and rbp is saved at CFA plus a constant or left alone. Such
 * a row fits in a few bytes and, once cached, unwinds a frame with two
 * stack reads instead of libdw's interpretation of the CFI program (a
 * malloc'd frame state per frame). Anything else (a CFA expression, a
 * signal frame, code without CFI) is reported as not simple, and the
 * caller unwinds that sample with libdwfl, unless it knows better (the
 * unwinder knows signal frames and Go's own table).
 *
 * Ownership: cfi_rules_new() returns a heap object freed by
 * cfi_rules_free(); lookups borrow the Dwfl, whose modules must not change
 * between cfi_rules_clear() calls.
 */
#ifndef RECCE_CFI_RULES_H
#define RECCE_CFI_RULES_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

/* DWARF register numbers of x86-64. */
#define CFI_REG_BP 6
#define CFI_REG_SP 7

enum cfi_how {
	CFI_SAVED_AT = 1, /* saved at CFA + offset */
	CFI_SAME,	  /* the caller's value is this frame's */
	CFI_UNDEFINED,	  /* not recoverable; for the return address: the outermost frame */
	CFI_NONE,	  /* ra_how only: the module has no CFI at this address */
	CFI_SIGNAL,	  /* ra_how only: the caller returns to a signal's restorer, and
			     the interrupted registers lie in the kernel's frame at SP */
};

struct cfi_rule {
	int32_t cfa_off; /* CFA = cfa_reg + cfa_off */
	int32_t ra_off;	 /* with ra_how CFI_SAVED_AT */
	int32_t bp_off;	 /* with bp_how CFI_SAVED_AT */
	uint8_t cfa_reg; /* CFI_REG_SP or CFI_REG_BP */
	uint8_t ra_how, bp_how;
	uint8_t go;	  /* from Go's own table, where the file has no CFI */
	uint8_t go_code;  /* Go code, which keeps its frame pointer in a frame */
	uint8_t ra_exact; /* the return address is where the caller was interrupted
			     (Go's asyncPreempt): looked up as it is, not minus one */
};

struct cfi_rules;

struct cfi_rules *cfi_rules_new(void);
void cfi_rules_free(struct cfi_rules *c);

/* Forgets every cached rule (the Dwfl's modules changed). */
void cfi_rules_clear(struct cfi_rules *c);

/* The rule at pc (the exact address to look up: a return address minus
 * one for callers), cached by pc. Returns 1 with *rule, 0 when pc has no
 * simple rule (or no module), -ENOMEM. */
int cfi_rules_get(struct cfi_rules *c, Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule);

/* The same in parts, for a cache under a key of the caller's (a file and
 * an address in it, shared by every process that maps the file). */
/* The rule at pc from dwfl's CFI, uncached: 1 with *rule (ra_how
 * CFI_NONE where the module has no CFI for pc), 0 when pc has no simple
 * rule (a fact of the file), -ENOENT when dwfl has no module at pc (a
 * fact of this Dwfl only: not to be kept under a file's key). */
int cfi_rules_compute(Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule);
/* The cached answer under key: 1 with *rule, 0 (no simple rule), or
 * -ENOENT when none is cached. */
int cfi_rules_find(struct cfi_rules *c, uint64_t key, struct cfi_rule *rule);
/* Keeps an answer (simple: 1 with *rule, 0 without) under key; past
 * 2^20 keys nothing more is kept. 0 or -ENOMEM. */
int cfi_rules_put(struct cfi_rules *c, uint64_t key, int simple, const struct cfi_rule *rule);

#endif
