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

static int add(struct func_exits *e, size_t offset, enum func_exit_kind kind, size_t length)
{
	struct func_exit *v = array_reserve(e->v, &e->cap, e->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->v = v;
	e->v[e->n++] = (struct func_exit){(uint32_t)offset, (uint8_t)kind, (uint8_t)length};
	return 0;
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
		switch (insn.meta.category) {
		case ZYDIS_CATEGORY_RET:
			err = add(out, off, FUNC_EXIT_RET, insn.length);
			break;
		case ZYDIS_CATEGORY_UNCOND_BR:
			if (leaves(&insn, ops, vaddr + off, vaddr, len, &indirect))
				err = add(out, off, indirect ? FUNC_EXIT_INDIRECT : FUNC_EXIT_TAIL,
					  insn.length);
			break;
		case ZYDIS_CATEGORY_COND_BR:
			if (leaves(&insn, ops, vaddr + off, vaddr, len, &indirect))
				err = add(out, off, FUNC_EXIT_COND, insn.length);
			break;
		default:
			break;
		}
		if (err)
			return err;
		off += insn.length;
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

void func_exits_release(struct func_exits *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}
