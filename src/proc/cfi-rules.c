/*
 * Cached unwinding rules (see cfi-rules.h): a map from program counter to
 * rule, filled from libdw's CFI the way libdwfl's own unwinder finds it
 * (.eh_frame first, then .debug_frame).
 */
#include "proc/cfi-rules.h"

#include "util/array.h"
#include "util/u64map.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RULES_MAX    (1u << 20) /* past this many PCs, rules are not kept */
#define DWARF_REG_RA 16

struct cfi_rules {
	struct u64map by_pc; /* pc -> 1 + index in rules[]; 0: not simple */
	struct cfi_rule *rules;
	size_t n, cap;
};

struct cfi_rules *cfi_rules_new(void)
{
	struct cfi_rules *c = calloc(1, sizeof(*c));

	if (c)
		u64map_init(&c->by_pc);
	return c;
}

void cfi_rules_free(struct cfi_rules *c)
{
	if (!c)
		return;
	u64map_release(&c->by_pc);
	free(c->rules);
	free(c);
}

void cfi_rules_clear(struct cfi_rules *c)
{
	if (!c)
		return;
	u64map_release(&c->by_pc);
	u64map_init(&c->by_pc);
	c->n = 0;
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

int cfi_rules_compute(Dwfl *dwfl, uint64_t pc, struct cfi_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr bias;

	memset(r, 0, sizeof(*r));
	if (!mod)
		return -ENOENT;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
		fr = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
			r->ra_how = CFI_NONE;
			return 1;
		}
	}
	int simple = frame_rule(fr, r);
	free(fr);
	return simple;
}

int cfi_rules_find(struct cfi_rules *c, uint64_t key, struct cfi_rule *rule)
{
	uint64_t v;

	if (!u64map_get(&c->by_pc, key, &v))
		return -ENOENT;
	if (v)
		*rule = c->rules[v - 1];
	return v != 0;
}

int cfi_rules_put(struct cfi_rules *c, uint64_t key, int simple, const struct cfi_rule *rule)
{
	uint64_t v = 0;

	if (u64map_count(&c->by_pc) >= RULES_MAX)
		return 0;
	if (simple) {
		struct cfi_rule *nr = array_reserve(c->rules, &c->cap, c->n + 1, sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		c->rules = nr;
		c->rules[c->n++] = *rule;
		v = c->n;
	}
	return u64map_put(&c->by_pc, key, v) < 0 ? -ENOMEM : 0;
}

int cfi_rules_get(struct cfi_rules *c, Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule)
{
	int got = cfi_rules_find(c, pc, rule);

	if (got >= 0)
		return got;
	int simple = cfi_rules_compute(dwfl, pc, rule);
	/* No module at pc is kept as "not simple" too: cfi_rules_clear()
	 * forgets it when modules are added. */
	if (simple < 0)
		simple = 0;
	if (cfi_rules_put(c, pc, simple, rule) < 0)
		return -ENOMEM;
	return simple;
}
