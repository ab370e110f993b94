/*
 * An object's indirect calls, by a linear sweep of .text (see
 * indirect-calls.h).
 */
#include "symbols/indirect-calls.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"

/* The general register r as enum x86_gpr (Zydis numbers them alike), or
 * -1 for any other. */
static int gpr_of(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE || ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR64)
		return -1;
	return ZydisRegisterGetId(r);
}

/* The .text section's file offset and size. */
static int text_range(int fd, struct code_range *r)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	int err = -ENOEXEC;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		if (elf)
			elf_end(elf);
		return err;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(name, ".text") != 0)
			continue;
		r->offset = sh.sh_offset;
		r->len = sh.sh_size;
		err = 0;
		break;
	}
	elf_end(elf);
	return err;
}

/* Adds the indirect calls of code[len], read from file offset base. */
static int sweep(const uint8_t *code, size_t len, uint64_t base, struct indirect_call **out,
		 size_t *n, size_t *cap)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	int table_reg = -1; /* the register the last instruction made a table's target */
	for (size_t pos = 0; pos < len;) {
		if (!ZYAN_SUCCESS(
			ZydisDecoderDecodeFull(&dec, code + pos, len - pos, &insn, ops))) {
			pos++; /* not code: step on */
			table_reg = -1;
			continue;
		}
		const ZydisDecodedOperand *op = &ops[0];
		struct indirect_call c = {base + pos, insn.length, 0, 0, 0, 0};
		int keep = 0, jump = insn.mnemonic == ZYDIS_MNEMONIC_JMP;
		if (jump && op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    gpr_of(op->reg.value) == table_reg)
			jump = 0; /* a switch's jump through its table */
		c.tail = (uint8_t)jump;
		if ((insn.mnemonic == ZYDIS_MNEMONIC_CALL || jump) &&
		    insn.operand_count_visible == 1) {
			if (op->type == ZYDIS_OPERAND_TYPE_REGISTER && gpr_of(op->reg.value) >= 0) {
				c.reg = (uint8_t)gpr_of(op->reg.value);
				keep = 1;
			} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
				   insn.address_width == 64 &&
				   op->mem.index == ZYDIS_REGISTER_NONE &&
				   gpr_of(op->mem.base) >= 0 && op->mem.disp.value >= INT16_MIN &&
				   op->mem.disp.value <= INT16_MAX &&
				   (op->mem.segment == ZYDIS_REGISTER_DS ||
				    op->mem.segment == ZYDIS_REGISTER_SS)) {
				c.reg = (uint8_t)gpr_of(op->mem.base);
				c.mem = 1;
				c.disp = (int32_t)op->mem.disp.value;
				keep = 1;
			}
		}
		if (keep) {
			struct indirect_call *v = array_reserve(*out, cap, *n + 1, sizeof(**out));
			if (!v)
				return -ENOMEM;
			*out = v;
			v[(*n)++] = c;
		}
		/* A switch computes its target as table base + entry (an add
		 * to the register) or loads it through an index. */
		table_reg = -1;
		if (insn.operand_count_visible == 2 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (insn.mnemonic == ZYDIS_MNEMONIC_ADD ||
		     (ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		      ops[1].mem.index != ZYDIS_REGISTER_NONE)))
			table_reg = gpr_of(ZydisRegisterGetLargestEnclosing(
			    ZYDIS_MACHINE_MODE_LONG_64, ops[0].reg.value));
		pos += insn.length;
	}
	return 0;
}

int indirect_calls_find_in(int fd, const struct code_range *ranges, size_t nranges,
			   struct indirect_call **out, size_t *n)
{
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < nranges && !err; i++) {
		uint8_t *code = malloc(ranges[i].len ? ranges[i].len : 1);
		if (!code) {
			err = -ENOMEM;
			break;
		}
		ssize_t got = pread(fd, code, ranges[i].len, (off_t)ranges[i].offset);
		if (got > 0)
			err = sweep(code, (size_t)got, ranges[i].offset, out, n, &cap);
		free(code);
	}
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

int indirect_calls_find(int fd, struct indirect_call **out, size_t *n)
{
	struct code_range text;
	int err = text_range(fd, &text);

	*out = NULL;
	*n = 0;
	return err ? err : indirect_calls_find_in(fd, &text, 1, out, n);
}
