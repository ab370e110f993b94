/*
 * Callers relying on a callee's register use (see call-sites.h). Each
 * function of the file is read from the file; only those holding an
 * e8 rel32 that lands on the callee are decoded.
 */
#include "symbols/call-sites.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolize.h"

#define WALK_MAX 64	    /* instructions followed after a call */
#define FUNC_MAX (1u << 20) /* bytes of one function read at most */

struct scan {
	struct sym_file *f;
	uint64_t callee;
	int ret_float, ret_wide;
	struct call_site_hazard *h;
	uint8_t *buf;
	size_t cap;
	int found;
};

/* The bit of a call-clobbered register that is not the return value's:
 * rcx rdx rsi rdi r8-r11 (0-7), xmm0-15 (8-23); -1 for others. */
static int clobbered_bit(ZydisRegister r, const struct scan *sc)
{
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	static const ZydisRegister gpr[8] = {
	    ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
	    ZYDIS_REGISTER_R8,	ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11};
	for (int i = 0; i < 8; i++)
		if (big == gpr[i])
			return i == 1 && sc->ret_wide ? -1 : i;
	if (big >= ZYDIS_REGISTER_ZMM0 && big <= ZYDIS_REGISTER_ZMM15) {
		int x = (int)(big - ZYDIS_REGISTER_ZMM0);
		if ((x == 0 && sc->ret_float) || (x == 1 && sc->ret_float && sc->ret_wide))
			return -1;
		return 8 + x;
	}
	return -1;
}

static void reg_name(int bit, char *out)
{
	static const char *const gpr[8] = {"rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"};
	if (bit < 8)
		strcpy(out, gpr[bit]);
	else {
		int x = bit - 8;
		memcpy(out, "xmm", 3);
		out[3] = (char)(x >= 10 ? '1' : '0' + x);
		out[4] = (char)(x >= 10 ? '0' + x - 10 : 0);
		out[5] = 0;
	}
}

/* At the next call: its arguments are set in order (rdi rsi rdx rcx r8
 * r9), so one left unset below the last one set is passed as it was, a
 * read. Returns 1 with the hazard filled. */
static int args_unset(struct scan *sc, uint32_t written, size_t off, const char *name)
{
	static const int arg_bit[6] = {3, 2, 1, 0, 4, 5}; /* rdi rsi rdx rcx r8 r9 */
	int last = -1;

	for (int i = 0; i < 6; i++)
		if (written >> arg_bit[i] & 1)
			last = i;
	for (int i = 0; i < last; i++) {
		int bit = arg_bit[i];
		if (!(written >> bit & 1) && !(bit == 1 && sc->ret_wide)) {
			sc->h->caller = name;
			reg_name(bit, sc->h->reg);
			sc->h->offset = off;
			return 1;
		}
	}
	return 0;
}

/* Follows the code after a call at off; 1 with the hazard filled. */
static int walk_after(struct scan *sc, const ZydisDecoder *dec, const uint8_t *code, size_t len,
		      size_t off, const char *name)
{
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t written = 0;

	for (int n = 0; n < WALK_MAX && off < len; n++, off += insn.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, &insn, ops)))
			return 0;
		int cat = insn.meta.category;
		if (cat == ZYDIS_CATEGORY_CALL)
			return args_unset(sc, written, off, name);
		if (cat == ZYDIS_CATEGORY_RET || cat == ZYDIS_CATEGORY_UNCOND_BR)
			return 0;
		/* A register both read and written ("xor ecx, ecx" aside) is
		 * read first; a zeroing idiom reads nothing. */
		int zeroing =
		    (insn.mnemonic == ZYDIS_MNEMONIC_XOR || insn.mnemonic == ZYDIS_MNEMONIC_PXOR ||
		     insn.mnemonic == ZYDIS_MNEMONIC_XORPS ||
		     insn.mnemonic == ZYDIS_MNEMONIC_VPXOR ||
		     insn.mnemonic == ZYDIS_MNEMONIC_VXORPS) &&
		    insn.operand_count_visible >= 2 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[insn.operand_count_visible - 1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[0].reg.value == ops[insn.operand_count_visible - 1].reg.value;
		uint32_t now_written = 0;
		for (int i = 0; i < insn.operand_count; i++) {
			const ZydisDecodedOperand *o = &ops[i];
			ZydisRegister regs[3] = {ZYDIS_REGISTER_NONE};
			int reads = 0;
			if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
				regs[0] = o->reg.value;
				reads = (o->actions & ZYDIS_OPERAND_ACTION_MASK_READ) && !zeroing;
				int bit = clobbered_bit(o->reg.value, sc);
				int width =
				    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, o->reg.value);
				if (bit >= 0 && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
				    (bit >= 8 || width >= 32))
					now_written |= 1u << bit;
			} else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY) {
				regs[0] = o->mem.base;
				regs[1] = o->mem.index;
				reads = 1;
			}
			for (int k = 0; k < 2 && reads; k++) {
				int bit = regs[k] == ZYDIS_REGISTER_NONE
					      ? -1
					      : clobbered_bit(regs[k], sc);
				if (bit >= 0 && !(written >> bit & 1)) {
					sc->h->caller = name;
					reg_name(bit, sc->h->reg);
					sc->h->offset = off;
					return 1;
				}
			}
		}
		written |= now_written;
	}
	return 0;
}

static int scan_function(const char *name, uint64_t vaddr, uint64_t size, void *ctx)
{
	struct scan *sc = ctx;
	uint64_t off;

	if (size < 5 || size > FUNC_MAX || sym_file_vaddr_to_offset(sc->f, vaddr, &off) != 0)
		return 0;
	if (size > sc->cap) {
		uint8_t *nb = realloc(sc->buf, size);
		if (!nb)
			return -ENOMEM;
		sc->buf = nb;
		sc->cap = size;
	}
	if (pread(sym_file_fd(sc->f), sc->buf, size, (off_t)off) != (ssize_t)size)
		return 0;
	int any = 0;
	for (size_t i = 0; i + 5 <= size && !any; i++) {
		int32_t rel;
		memcpy(&rel, sc->buf + i + 1, 4);
		any = sc->buf[i] == 0xe8 && vaddr + i + 5 + (uint64_t)(int64_t)rel == sc->callee;
	}
	if (!any)
		return 0;
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	for (size_t i = 0; i < size; i += insn.length) {
		ZyanU64 target;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, sc->buf + i, size - i, &insn, ops)))
			return 0;
		if (insn.meta.category != ZYDIS_CATEGORY_CALL ||
		    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[0], vaddr + i, &target)) ||
		    target != sc->callee)
			continue;
		if (walk_after(sc, &dec, sc->buf, size, i + insn.length, name))
			return 1;
	}
	return 0;
}

int call_sites_keep_registers(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
			      int ret_float, int ret_wide, struct call_site_hazard *h)
{
	struct scan sc = {f, vaddr, ret_float, ret_wide, h, NULL, 0, 0};

	memset(h, 0, sizeof(*h));
	int r = symbolizer_foreach_function(s, f, scan_function, &sc);
	free(sc.buf);
	return r;
}
