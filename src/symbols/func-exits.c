/*
 * The exits of a function's code (see func-exits.h), through Zydis's
 * decoder: a linear sweep, one instruction after the other.
 */
#include "symbols/func-exits.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

static int add(struct func_exits *e, const struct func_exit *x)
{
	struct func_exit *v = array_reserve(e->v, &e->cap, e->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->v = v;
	e->v[e->n++] = *x;
	return 0;
}

/* A 64-bit general-purpose register as enum x86_gpr; X86_NONE for none,
 * and -1 for any other register. */
static int gpr_of(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return X86_NONE;
	if (ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR64)
		return -1;
	return ZydisRegisterGetId(r);
}

/*
 * The opcodes Linux's x86 uprobes accept (arch/x86/kernel/uprobes.c's
 * good_insns_64 and good_2byte_insns), one string of 16 per row: the
 * kernel refuses the rest with ENOTSUPP. For a VEX or EVEX instruction it
 * looks its opcode up in the one-byte table, and a three-byte opcode
 * (0f 38, 0f 3a) it refuses outright.
 */
static const char *const good_one_byte[16] = {
    "1111110011111100", "1111110011111100", "1111110011111100", "1111110011111100",
    "0000000000000000", "1111111111111111", "0001110011110000", "1111111111111111",
    "1101111111111111", "1111111111111111", "1111111111111111", "1111111111111111",
    "1111001111110000", "1111000111111111", "1111000011110000", "0011011111001111",
};
static const char *const good_two_byte[16] = {
    "0000000000000011", "1111111101111111", "1111000011111111", "0111000000000000",
    "1111111111111111", "1111111111111111", "1111111111111111", "1111111100000011",
    "1111111111111111", "1111111111111111", "1111110011111101", "1111111101111111",
    "1111111111111111", "0111111111111111", "1111111111111111", "0111111111111110",
};

static int good(const char *const table[16], uint8_t op)
{
	return table[op >> 4][op & 15] == '1';
}

/* Why the kernel refuses a uprobe on a decoded instruction, or NULL. */
static const char *refusal(const ZydisDecodedInstruction *insn)
{
	for (ZyanU8 i = 0; i < insn->raw.prefix_count; i++) {
		switch (insn->raw.prefixes[i].value) {
		case 0xf0:
			return "a lock prefix";
		case 0x26:
		case 0x2e:
		case 0x36:
		case 0x3e:
			return "a segment override prefix";
		default:
			break;
		}
	}
	int ok;
	if (insn->encoding == ZYDIS_INSTRUCTION_ENCODING_VEX ||
	    insn->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX ||
	    insn->encoding == ZYDIS_INSTRUCTION_ENCODING_XOP ||
	    insn->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX)
		ok = good(good_one_byte, insn->opcode);
	else if (insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
		ok = good(good_one_byte, insn->opcode);
	else if (insn->opcode_map == ZYDIS_OPCODE_MAP_0F)
		ok = good(good_two_byte, insn->opcode);
	else if (insn->opcode_map == ZYDIS_OPCODE_MAP_0F0F)
		ok = good(good_two_byte, 0x0f); /* 3DNow!: the kernel sees 0f 0f */
	else
		ok = 0;
	return ok ? NULL : "an instruction the kernel's uprobes do not run out of line";
}

const char *func_unprobeable(const uint8_t *code, size_t len)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (!ZYAN_SUCCESS(
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &insn, ops)))
		return NULL;
	return refusal(&insn);
}

/* The condition of a conditional jump. */
static uint8_t cond_of(const ZydisDecodedInstruction *insn)
{
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_JRCXZ:
		return FUNC_COND_RCXZ;
	case ZYDIS_MNEMONIC_JECXZ:
		return FUNC_COND_ECXZ;
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return FUNC_COND_UNKNOWN;
	default:
		/* 0x70+cc (rel8) or 0x0f 0x80+cc (rel32). */
		return insn->opcode & 0x0f;
	}
}

/* What an indirect jump reads. */
static struct func_jump jump_of(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *op)
{
	struct func_jump j = {X86_NONE, X86_NONE, X86_NONE, 1, 0, 0, 0};
	int base, index;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER && (base = gpr_of(op->reg.value)) >= 0 &&
	    base != X86_NONE) {
		j.reg = (uint8_t)base;
		return j;
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || insn->address_width != 64 ||
	    (op->mem.segment != ZYDIS_REGISTER_DS && op->mem.segment != ZYDIS_REGISTER_SS &&
	     op->mem.segment != ZYDIS_REGISTER_NONE)) {
		j.unknown = 1;
		return j;
	}
	j.disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	j.scale = op->mem.scale ? op->mem.scale : 1;
	index = gpr_of(op->mem.index);
	if (op->mem.base == ZYDIS_REGISTER_RIP) {
		j.rip = 1;
		base = X86_NONE;
	} else {
		base = gpr_of(op->mem.base);
	}
	if (base < 0 || index < 0)
		j.unknown = 1;
	else {
		j.base = (uint8_t)base;
		j.index = (uint8_t)index;
	}
	return j;
}

/* Whether insn, a jump, leaves [vaddr, vaddr + len): a relative target
 * outside, or no relative target at all (then *indirect is set). */
static int leaves(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops, uint64_t at,
		  uint64_t vaddr, size_t len, int *indirect)
{
	ZyanU64 target;

	*indirect = 0;
	if (insn->operand_count_visible < 1 || ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
	    !ops[0].imm.is_relative) {
		*indirect = 1;
		return 1;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(insn, &ops[0], at, &target)))
		return 0;
	return target < vaddr || target >= vaddr + len;
}

int func_exits_find(const uint8_t *code, size_t len, uint64_t vaddr, struct func_exits *out,
		    size_t *bad_offset)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t off = 0;

	out->n = 0;
	out->instructions = 0;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	while (off < len) {
		if (!ZYAN_SUCCESS(
			ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops))) {
			*bad_offset = off;
			return -EILSEQ;
		}
		out->instructions++;
		int err = 0, indirect;
		struct func_exit x = {(uint32_t)off, 0, insn.length, 0, 0, {0}};
		switch (insn.meta.category) {
		case ZYDIS_CATEGORY_RET:
			x.kind = FUNC_EXIT_RET;
			break;
		case ZYDIS_CATEGORY_UNCOND_BR:
			if (leaves(&insn, ops, vaddr + off, vaddr, len, &indirect)) {
				x.kind = indirect ? FUNC_EXIT_INDIRECT : FUNC_EXIT_TAIL;
				if (indirect)
					x.jump = jump_of(&insn, &ops[0]);
			}
			break;
		case ZYDIS_CATEGORY_COND_BR:
			if (leaves(&insn, ops, vaddr + off, vaddr, len, &indirect)) {
				x.kind = FUNC_EXIT_COND;
				x.cond = cond_of(&insn);
			}
			break;
		default:
			break;
		}
		if (x.kind) {
			x.refused = refusal(&insn) != NULL;
			err = add(out, &x);
		}
		if (err)
			return err;
		off += insn.length;
	}
	return 0;
}

int func_branch_into(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t lo, uint64_t hi,
		     size_t *where)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZyanU64 target;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	for (size_t off = 0; off < len; off += insn.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops)))
			return -EILSEQ;
		int cat = insn.meta.category;
		if (cat != ZYDIS_CATEGORY_UNCOND_BR && cat != ZYDIS_CATEGORY_COND_BR &&
		    cat != ZYDIS_CATEGORY_CALL)
			continue;
		if (insn.operand_count_visible < 1 || ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
		    !ops[0].imm.is_relative ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], vaddr + off, &target)))
			continue;
		if (target >= lo && target < hi) {
			*where = off;
			return 1;
		}
	}
	return 0;
}

/* Whether insn is "cmp REG, [r14 + 16]": the goroutine's stack guard. */
static int is_guard_compare(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops)
{
	return insn->mnemonic == ZYDIS_MNEMONIC_CMP && insn->operand_count_visible == 2 &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[1].mem.base == ZYDIS_REGISTER_R14 &&
	       ops[1].mem.index == ZYDIS_REGISTER_NONE && ops[1].mem.disp.value == 16;
}

size_t func_go_entry(const uint8_t *code, size_t len)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t off = 0;
	int compared = 0;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return 0;
	/* The check comes first, after at most a lea or a mov and sub that
	 * compute rsp minus a large frame. */
	for (int i = 0; i < 5 && off < len; i++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &insn, ops)))
			return 0;
		off += insn.length;
		if (compared)
			return insn.mnemonic == ZYDIS_MNEMONIC_JBE ? off : 0;
		compared = is_guard_compare(&insn, ops);
	}
	return 0;
}

int func_exit_decidable(const struct func_exit *e)
{
	if (e->refused)
		return 0;
	switch (e->kind) {
	case FUNC_EXIT_COND:
		return e->cond != FUNC_COND_UNKNOWN;
	case FUNC_EXIT_INDIRECT:
		return !e->jump.unknown;
	default:
		return 1;
	}
}

/* Whether condition code cond holds under rflags and rcx. */
static int cond_holds(unsigned cond, uint64_t flags, uint64_t rcx)
{
	int cf = !!(flags & X86_CF), pf = !!(flags & X86_PF), zf = !!(flags & X86_ZF);
	int sf = !!(flags & X86_SF), of = !!(flags & X86_OF), r;

	switch (cond) {
	case FUNC_COND_RCXZ:
		return rcx == 0;
	case FUNC_COND_ECXZ:
		return (uint32_t)rcx == 0;
	default:
		break;
	}
	/* Even codes test a flag, odd codes its negation. */
	switch (cond >> 1) {
	case 0:
		r = of;
		break;
	case 1:
		r = cf;
		break;
	case 2:
		r = zf;
		break;
	case 3:
		r = cf || zf;
		break;
	case 4:
		r = sf;
		break;
	case 5:
		r = pf;
		break;
	case 6:
		r = sf != of;
		break;
	default:
		r = zf || sf != of;
		break;
	}
	return (cond & 1) ? !r : r;
}

int func_exit_taken(const struct func_exit *e, uint64_t size, uint64_t ip, const uint64_t *gpr,
		    uint64_t flags, func_read_fn read, void *arg)
{
	const struct func_jump *j = &e->jump;
	uint64_t target, start = ip - e->offset;

	switch (e->kind) {
	case FUNC_EXIT_RET:
	case FUNC_EXIT_TAIL:
		return 1;
	case FUNC_EXIT_COND:
		return e->cond != FUNC_COND_UNKNOWN && cond_holds(e->cond, flags, gpr[X86_RCX]);
	case FUNC_EXIT_INDIRECT:
		break;
	default:
		return 0;
	}
	if (j->unknown)
		return 0;
	if (j->reg != X86_NONE) {
		target = gpr[j->reg];
	} else {
		uint64_t at = (uint64_t)j->disp;
		if (j->rip)
			at += ip + e->length;
		if (j->base != X86_NONE)
			at += gpr[j->base];
		if (j->index != X86_NONE)
			at += gpr[j->index] * j->scale;
		int err = read(arg, at, &target);
		if (err)
			return err;
	}
	return target < start || target >= start + size;
}

void func_exits_release(struct func_exits *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}
