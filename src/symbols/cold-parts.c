/*
 * The named function each unnamed .eh_frame range of a file is a cold
 * part of (see sym-file.h, sym_cold_parent()).
 *
 * GCC moves a function's unlikely blocks out of it, into FUNC.cold in
 * .text.unlikely, with an .eh_frame entry of their own. A full symbol
 * table names that part; a stripped file (every Debian package) names
 * only the function, and the part would be shown as an address range,
 * which hides, for one, CPython's interpreter loop (ceval's tracing and
 * probe paths are unlikely code). An unnamed range is a part of function
 * F when F's code jumps into it, no other named function's code jumps
 * into it or calls it, and at its first byte its call frame information
 * is not a function's entry (the CFA is not rsp + 8: F's frame is still
 * on the stack). A function tail-called from one place fails the last
 * test and stays unnamed. The code is decoded once per file, on the
 * first range that needs a name, from each named function's first byte
 * to its last (compilers put no data in x86-64 code).
 */
#include <Zydis/Zydis.h>
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "symbols/sym-file.h"

#define PARENT_NONE	 0
#define PARENT_AMBIGUOUS UINT32_MAX

/* The index in f->fdes of the range holding addr, or -1. */
static long fde_at(const struct sym_file *f, uint64_t addr)
{
	const struct range *r = ranges_find(&f->fdes, addr);

	return r ? r - f->fdes.v : -1;
}

/* Notes that function (an index of f->sym_names) jumps (call: calls)
 * from its code into the unnamed range holding target. */
static void note(struct sym_file *f, uint64_t target, uint32_t function, int call)
{
	long j = fde_at(f, target);

	if (j < 0 || f->fde_parent[j] == PARENT_AMBIGUOUS)
		return;
	if (call || (f->fde_parent[j] != PARENT_NONE && f->fde_parent[j] != function + 1))
		f->fde_parent[j] = PARENT_AMBIGUOUS;
	else
		f->fde_parent[j] = function + 1;
}

/* Decodes the code of named range r (len bytes at code) and notes where
 * it branches out of itself. */
static void sweep(struct sym_file *f, const ZydisDecoder *dec, const struct range *r,
		  const uint8_t *code, size_t len)
{
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction insn;

	for (size_t off = 0; off < len; off += insn.length) {
		if (!ZYAN_SUCCESS(
			ZydisDecoderDecodeInstruction(dec, &ctx, code + off, len - off, &insn)))
			return;
		int cat = insn.meta.category;
		if ((cat != ZYDIS_CATEGORY_UNCOND_BR && cat != ZYDIS_CATEGORY_COND_BR &&
		     cat != ZYDIS_CATEGORY_CALL) ||
		    insn.raw.imm[0].size == 0 || !insn.raw.imm[0].is_relative)
			continue;
		uint64_t target =
		    r->lo + off + insn.length + (uint64_t)(int64_t)insn.raw.imm[0].value.s;
		if (target < r->lo || target >= r->hi)
			note(f, target, r->idx, cat == ZYDIS_CATEGORY_CALL);
	}
}

/* Whether the call frame information of cfi at addr is a function's
 * entry: the CFA is rsp + 8, the return address all that was pushed. */
static int is_entry(Dwarf_CFI *cfi, uint64_t addr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	int entry = 1; /* unknown: not claimed as a part */

	if (dwarf_cfi_addrframe(cfi, addr, &frame) == 0 && dwarf_frame_cfa(frame, &ops, &nops) == 0)
		entry = nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == 7 &&
			ops[0].number2 == 8;
	free(frame);
	return entry;
}

/* Fills f->fde_parent (f->fdes and f->syms are built). */
static int build(struct sym_file *f)
{
	GElf_Addr bias;
	Elf *elf = f->mod ? dwfl_module_getelf(f->mod, &bias) : NULL;
	ZydisDecoder dec;
	uint32_t idx;
	int rc = sym_table_find(f, 0, &idx); /* f->syms, built on first use */

	if (rc < 0)
		return rc;
	f->fde_parent = calloc(f->fdes.n, sizeof(*f->fde_parent));
	if (!f->fde_parent)
		return -ENOMEM;
	if (!elf || f->syms_go || f->syms.n == 0 ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return 0;
	/* Ranges a symbol names are nobody's part. */
	for (size_t j = 0; j < f->fdes.n; j++) {
		if (sym_table_find(f, f->fdes.v[j].lo, &idx) != 0)
			f->fde_parent[j] = PARENT_AMBIGUOUS;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			continue;
		for (size_t k = 0; k < f->syms.n; k++) {
			const struct range *r = &f->syms.v[k];
			if (r->lo >= sh.sh_addr && r->hi <= sh.sh_addr + sh.sh_size)
				sweep(f, &dec, r, (const uint8_t *)d->d_buf + (r->lo - sh.sh_addr),
				      r->hi - r->lo);
		}
	}
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	for (size_t j = 0; j < f->fdes.n; j++) {
		uint32_t p = f->fde_parent[j];
		int part = p != PARENT_NONE && p != PARENT_AMBIGUOUS;
		if (part && (!cfi || is_entry(cfi, f->fdes.v[j].lo)))
			f->fde_parent[j] = PARENT_AMBIGUOUS;
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	return 0;
}

int sym_cold_parent(struct sym_file *f, const struct range *fde, uint32_t *function)
{
	if (!f->cold_built) {
		f->cold_built = 1;
		int rc = build(f);
		if (rc < 0)
			return rc;
	}
	if (!f->fde_parent)
		return 0;
	uint32_t p = f->fde_parent[fde - f->fdes.v];
	if (p == PARENT_NONE || p == PARENT_AMBIGUOUS)
		return 0;
	*function = p - 1;
	return 1;
}
