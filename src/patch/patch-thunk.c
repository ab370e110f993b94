/*
 * The thunk's slot and library (see patch-thunk.h).
 */
#include "patch/patch-thunk.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "proc/lib-path.h"
#include "symbols/symbolize.h"

/* Which registers carry the result, as lib/patch/thunk.S reads them. */
#define RET_RAX	 1u
#define RET_RDX	 2u
#define RET_XMM0 4u
#define RET_XMM1 8u
#define RET_ALL	 15u

#define ARGS_UNKNOWN  256u /* bytes of stack arguments passed on when DWARF does not say */
#define ARGS_VARIADIC 128u /* more, for a "..." */

/* The slot's code: push qword [rip + 10] (the descriptor's address at
 * +16); jmp qword [rip + 12] (the thunk at +24); int3 padding. */
static const uint8_t slot_code[16] = {0xff, 0x35, 0x0a, 0x00, 0x00, 0x00, 0xff, 0x25,
				      0x0c, 0x00, 0x00, 0x00, 0xcc, 0xcc, 0xcc, 0xcc};

int patch_thunk_load(struct injector *inj, struct symbolizer *sym, uint64_t *entry, char *detail,
		     size_t dlen)
{
	char path[PATH_MAX];
	struct sym_file *f;
	uint64_t v;

	int err =
	    proc_lib_path(PATCH_THUNK_LIB, "RECCE_PATCH_LIB", path, sizeof(path), detail, dlen);
	if (err)
		return err;
	err = symbolizer_open(sym, path, -1, &f);
	if (err)
		return err;
	if (symbolizer_find_symbol(sym, f, "recce_patch_thunk", &v, NULL)) {
		snprintf(detail, dlen, "%s is not recce's thunk library", path);
		return -ENOEXEC;
	}
	uint64_t handle;
	err = injector_dlopen(inj, path, &handle, detail, dlen);
	if (err)
		return err;
	return injector_where(sym, inj->pid, f, v, entry);
}

static uint32_t result_regs(const struct sym_func_shape *s)
{
	if (!s)
		return RET_ALL;
	switch (s->ret) {
	case SYM_RET_VOID:
		return 0;
	case SYM_RET_INT:
		return RET_RAX | (s->ret_bytes > 8 ? RET_RDX : 0);
	case SYM_RET_FLOAT:
		return RET_XMM0 | (s->ret_bytes > 8 ? RET_XMM1 : 0);
	case SYM_RET_LONG_FLOAT: /* x87's st0, which the thunk leaves alone, or xmm0 */
		return RET_XMM0 | RET_XMM1;
	case SYM_RET_VECTOR:
		return RET_XMM0;
	case SYM_RET_AGGREGATE:
		return RET_RAX | RET_RDX | RET_XMM0 | RET_XMM1;
	}
	return RET_ALL;
}

void patch_thunk_slot(uint8_t out[PATCH_SLOT_LEN], uint64_t addr, uint64_t entry, uint64_t new_fn,
		      const struct sym_func_shape *shape, const struct injector *inj)
{
	uint64_t desc = addr + 32;
	uint64_t args =
	    shape ? shape->arg_bytes + (shape->variadic ? ARGS_VARIADIC : 0) : ARGS_UNKNOWN;
	uint64_t regs = result_regs(shape);
	/* The vector registers as wide as the machine keeps them: zmm0-31
	 * with AVX-512 state on, ymm with AVX, else xmm. */
	uint64_t width = inj->xmask & 0xe0 ? 2 : inj->xmask & 0x4 ? 1 : 0;

	memset(out, 0, PATCH_SLOT_LEN);
	memcpy(out, slot_code, sizeof(slot_code));
	memcpy(out + 16, &desc, 8);
	memcpy(out + 24, &entry, 8);
	memcpy(out + 32, &new_fn, 8);
	memcpy(out + 40, &args, 8);
	memcpy(out + 48, &regs, 8);
	memcpy(out + 56, &width, 8);
}

int patch_thunk_is_slot(const uint8_t slot[PATCH_SLOT_LEN], uint64_t addr, uint64_t *entry)
{
	uint64_t desc;

	memcpy(&desc, slot + 16, 8);
	memcpy(entry, slot + 24, 8);
	return memcmp(slot, slot_code, sizeof(slot_code)) == 0 && desc == addr + 32;
}
