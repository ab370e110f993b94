/*
 * Cached unwinding rules (see cfi-rules.h): an open-addressing table from
 * program counter to rule, filled from libdw's CFI the way libdwfl's own
 * unwinder finds it (.eh_frame first, then .debug_frame).
 */
#include "cfi-rules.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RULES_MAX    (1u << 20) /* past this many PCs, rules are not kept */
#define DWARF_REG_RA 16

struct entry {
	uint64_t key; /* pc + 1; 0: a free slot */
	struct cfi_rule rule;
	uint8_t simple;
};

struct cfi_rules {
	struct entry *v;
	size_t cap, n;
};

struct cfi_rules *cfi_rules_new(void)
{
	return calloc(1, sizeof(struct cfi_rules));
}

void cfi_rules_free(struct cfi_rules *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

void cfi_rules_clear(struct cfi_rules *c)
{
	if (c && c->v)
		memset(c->v, 0, c->cap * sizeof(*c->v));
	if (c)
		c->n = 0;
}

static size_t slot_hash(uint64_t key, size_t cap)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 32;
	return (size_t)key & (cap - 1);
}

static int fits_i32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Where the caller's regno is, if in a simple form. */
static int reg_rule(Dwarf_Frame *fr, int regno, uint8_t *how, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(fr, regno, mem, &ops, &nops) != 0)
		return 0;
	if (nops == 0) {
		/* libdw: ops_mem means undefined, NULL means same value. */
		*how = ops ? CFI_UNDEFINED : CFI_SAME;
		*off = 0;
		return 1;
	}
	if (ops != mem || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	*how = CFI_SAVED_AT;
	*off = 0;
	if (nops == 1)
		return 1;
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst && fits_i32((int64_t)ops[1].number)) {
		*off = (int32_t)(int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

static int frame_rule(Dwarf_Frame *fr, struct cfi_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;

	if (dwarf_frame_info(fr, NULL, NULL, &signal) != DWARF_REG_RA || signal)
		return 0;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != CFI_REG_SP && ops[0].number != CFI_REG_BP) ||
	    !fits_i32((int64_t)ops[0].number2))
		return 0;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (!reg_rule(fr, DWARF_REG_RA, &r->ra_how, &r->ra_off) || r->ra_how == CFI_SAME)
		return 0;
	return reg_rule(fr, CFI_REG_BP, &r->bp_how, &r->bp_off);
}

static int compute(Dwfl *dwfl, uint64_t pc, struct cfi_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr bias;

	if (!mod)
		return 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
		fr = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			return 0;
	}
	int simple = frame_rule(fr, r);
	free(fr);
	return simple;
}

static int grow(struct cfi_rules *c)
{
	size_t ncap = c->cap ? c->cap * 2 : 4096;
	struct entry *v = calloc(ncap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->v[i].key)
			continue;
		size_t j = slot_hash(c->v[i].key, ncap);
		while (v[j].key)
			j = (j + 1) & (ncap - 1);
		v[j] = c->v[i];
	}
	free(c->v);
	c->v = v;
	c->cap = ncap;
	return 0;
}

int cfi_rules_get(struct cfi_rules *c, Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule)
{
	uint64_t key = pc + 1;
	size_t j = 0;

	if (c->cap) {
		for (j = slot_hash(key, c->cap); c->v[j].key; j = (j + 1) & (c->cap - 1)) {
			if (c->v[j].key == key) {
				*rule = c->v[j].rule;
				return c->v[j].simple;
			}
		}
	}
	memset(rule, 0, sizeof(*rule));
	int simple = compute(dwfl, pc, rule);
	if (c->n >= RULES_MAX || !key)
		return simple;
	if ((c->n + 1) * 2 > c->cap) {
		if (grow(c) < 0)
			return -ENOMEM;
		for (j = slot_hash(key, c->cap); c->v[j].key; j = (j + 1) & (c->cap - 1))
			;
	}
	c->v[j] = (struct entry){key, *rule, (uint8_t)simple};
	c->n++;
	return simple;
}
