/*
 * Relocating a function's first instructions (see relocate.h).
 */
#include "inject/relocate.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <string.h>

static int put_rel32(uint8_t *out, size_t cap, size_t *at, const uint8_t *op, size_t oplen,
		     uint64_t to, uint64_t target)
{
	if (*at + oplen + 4 > cap)
		return -ENOSPC;
	uint64_t end = to + *at + oplen + 4;
	int64_t d = (int64_t)(target - end);
	if (d < INT32_MIN || d > INT32_MAX)
		return -ERANGE;
	int32_t rel = (int32_t)d;
	memcpy(out + *at, op, oplen);
	memcpy(out + *at + oplen, &rel, 4);
	*at += oplen + 4;
	return 0;
}

/* A relative branch of insn (at addr) re-encoded at to + *at. */
static int move_branch(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
		       uint64_t addr, uint64_t to, uint8_t *out, size_t cap, size_t *at,
		       uint64_t *target_out)
{
	ZyanU64 target;

	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(insn, &ops[0], addr, &target)))
		return -ENOTSUP;
	*target_out = target;
	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_UNCOND_BR: {
		static const uint8_t jmp = 0xe9;
		return put_rel32(out, cap, at, &jmp, 1, to, target);
	}
	case ZYDIS_CATEGORY_CALL: {
		/* Pushed by hand, the return address stays the original one,
		 * in the function where its unwind tables describe it: a C++
		 * exception thrown by the callee unwinds as before. A call
		 * moved is always the last instruction moved (it is 5 bytes
		 * long), so that address is the first one left in place. */
		uint64_t ret = addr + insn->length;
		uint8_t push[13] = {0x68, 0, 0, 0, 0, 0xc7, 0x44, 0x24, 0x04};
		uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);
		static const uint8_t jmp = 0xe9;
		if (*at + sizeof(push) > cap)
			return -ENOSPC;
		memcpy(push + 1, &lo, 4); /* push imm32: the low half, sign-extended */
		memcpy(push + 9, &hi, 4); /* mov dword [rsp + 4], imm32: the high half */
		memcpy(out + *at, push, sizeof(push));
		*at += sizeof(push);
		return put_rel32(out, cap, at, &jmp, 1, to, target);
	}
	case ZYDIS_CATEGORY_COND_BR:
		if (insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (insn->opcode & 0xf0) == 0x70) {
			uint8_t jcc[2] = {0x0f, (uint8_t)(0x80 | (insn->opcode & 0x0f))};
			return put_rel32(out, cap, at, jcc, 2, to, target);
		}
		if (insn->opcode_map == ZYDIS_OPCODE_MAP_0F && (insn->opcode & 0xf0) == 0x80) {
			uint8_t jcc[2] = {0x0f, insn->opcode};
			return put_rel32(out, cap, at, jcc, 2, to, target);
		}
		return -ENOTSUP; /* loop, jrcxz */
	default:
		return -ENOTSUP;
	}
}

/* An instruction with a RIP-relative memory operand, its displacement
 * re-aimed from addr to to + *at. */
static int move_riprel(const uint8_t *code, const ZydisDecodedInstruction *insn, uint64_t addr,
		       uint64_t to, uint8_t *out, size_t cap, size_t *at)
{
	if (insn->raw.disp.size != 32 || *at + insn->length > cap)
		return insn->raw.disp.size != 32 ? -ENOTSUP : -ENOSPC;
	int64_t target = (int64_t)(addr + insn->length) + insn->raw.disp.value;
	int64_t d = target - (int64_t)(to + *at + insn->length);
	if (d < INT32_MIN || d > INT32_MAX)
		return -ERANGE;
	int32_t disp = (int32_t)d;
	memcpy(out + *at, code, insn->length);
	memcpy(out + *at + insn->raw.disp.offset, &disp, 4);
	*at += insn->length;
	return 0;
}

int relocate_insn(const uint8_t *code, size_t avail, uint64_t addr, uint64_t to, uint8_t *out,
		  size_t cap, size_t *out_len, struct relocate_info *info)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t at = 0;
	int err = 0;

	memset(info, 0, sizeof(*info));
	*out_len = 0;
	if (!ZYAN_SUCCESS(
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, avail, &insn, ops)))
		return -EILSEQ;
	info->len = insn.length;
	if (insn.mnemonic == ZYDIS_MNEMONIC_RET)
		info->kind = RELOCATE_RET;
	if (!(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE)) {
		if (insn.length > cap)
			return -ENOSPC;
		memcpy(out, code, insn.length);
		at = insn.length;
	} else if (insn.raw.imm[0].is_relative) {
		info->kind =
		    insn.meta.category == ZYDIS_CATEGORY_CALL ? RELOCATE_CALL : RELOCATE_JUMP;
		err = move_branch(&insn, ops, addr, to, out, cap, &at, &info->target);
	} else {
		err = move_riprel(code, &insn, addr, to, out, cap, &at);
	}
	*out_len = at;
	return err;
}

int relocate_entry(const uint8_t *code, size_t avail, uint64_t from, size_t min_len, uint64_t to,
		   uint8_t *out, size_t cap, size_t *out_len, size_t *taken)
{
	size_t off = 0, at = 0, nbranch = 0;
	uint64_t branches[16];
	int err = 0;

	while (off < min_len && !err) {
		struct relocate_info in;
		size_t n;
		err = relocate_insn(code + off, avail - off, from + off, to + at, out + at,
				    cap - at, &n, &in);
		if (err == -EILSEQ) {
			*taken = off;
			return err;
		}
		/* A call moved must be the last instruction moved: see
		 * move_branch. */
		if (!err && in.kind == RELOCATE_CALL && off + in.len < min_len)
			err = -ENOTSUP;
		if (in.kind == RELOCATE_JUMP || in.kind == RELOCATE_CALL)
			branches[nbranch] = in.target,
			nbranch += nbranch + 1 < sizeof(branches) / sizeof(branches[0]);
		at += n;
		off += in.len;
	}
	/* A jump into the moved bytes, past their first, would land in the
	 * middle of the jump that replaces them (the caller checks the rest
	 * of the function the same way). */
	for (size_t i = 0; i < nbranch && !err; i++)
		if (branches[i] > from && branches[i] < from + off)
			err = -EXDEV;
	if (!err)
		err = relocate_jump(to + at, from + off, out + at, cap - at);
	if (!err)
		at += 5;
	*taken = off;
	*out_len = at;
	return err;
}

int relocate_jump(uint64_t at, uint64_t target, uint8_t *out, size_t cap)
{
	static const uint8_t jmp = 0xe9;
	size_t used = 0;

	return put_rel32(out, cap, &used, &jmp, 1, at, target);
}
