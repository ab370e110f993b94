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

/* The .text section's bytes (*code, freed with free()), size and file
 * offset. */
static int read_text(int fd, uint8_t **code, size_t *size, uint64_t *offset)
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
		*code = malloc(sh.sh_size ? sh.sh_size : 1);
		if (!*code) {
			err = -ENOMEM;
			break;
		}
		if (pread(fd, *code, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size) {
			free(*code);
			break;
		}
		*size = sh.sh_size;
		*offset = sh.sh_offset;
		err = 0;
		break;
	}
	elf_end(elf);
	return err;
}

int indirect_calls_find(int fd, struct indirect_call **out, size_t *n)
{
	uint8_t *code;
	size_t size, cap = 0;
	uint64_t base;
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	*out = NULL;
	*n = 0;
	int err = read_text(fd, &code, &size, &base);
	if (err)
		return err;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t pos = 0; pos < size;) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + pos, size - pos, &insn, ops))) {
			pos++; /* not code: step on */
			continue;
		}
		const ZydisDecodedOperand *op = &ops[0];
		struct indirect_call c = {base + pos, insn.length, 0, 0, 0};
		int keep = 0;
		if (insn.mnemonic == ZYDIS_MNEMONIC_CALL && insn.operand_count_visible == 1) {
			if (op->type == ZYDIS_OPERAND_TYPE_REGISTER && gpr_of(op->reg.value) >= 0) {
				c.reg = (uint8_t)gpr_of(op->reg.value);
				keep = 1;
			} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
				   insn.address_width == 64 && op->mem.index == ZYDIS_REGISTER_NONE &&
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
			struct indirect_call *v = array_reserve(*out, &cap, *n + 1, sizeof(**out));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			*out = v;
			v[(*n)++] = c;
		}
		pos += insn.length;
	}
	free(code);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}
