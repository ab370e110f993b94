/*
 * Trampolines for in-process probes (see trampoline.h).
 */
#include "inject/trampoline.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "inject/relocate.h"
#include "symbols/func-exits.h"

/* A call of the recorder: the registers pushed, recorder(id, frame), the
 * registers popped. */
static int emit_hook(const struct tramp_hooks *hk, uint8_t *b, size_t cap, size_t *at, int probe,
		     uint64_t ip)
{
	static const uint8_t push[] = {0x57, 0x56, 0x52, 0x51, 0x41, 0x50, 0x41,
				       0x51, 0x50, 0x41, 0x52, 0x41, 0x53};
	static const uint8_t pop[] = {0x41, 0x5b, 0x41, 0x5a, 0x58, 0x41, 0x59,
				      0x41, 0x58, 0x59, 0x5a, 0x5e, 0x5f};
	uint32_t id = 0;
	uint64_t hit = hk ? hk->recorder : 0;

	if (*at + TRAMP_HOOK_LEN > cap)
		return -ENOSPC;
	if (hk && hk->number) {
		int err = hk->number(hk->arg, probe, ip, &id);
		if (err)
			return err;
	}
	b += *at;
	memcpy(b, push, sizeof(push));
	b += sizeof(push);
	*b++ = 0x48, *b++ = 0xc7, *b++ = 0xc7; /* mov rdi, imm32 */
	memcpy(b, &id, 4);
	b += 4;
	*b++ = 0x48, *b++ = 0x89, *b++ = 0xe6; /* mov rsi, rsp */
	*b++ = 0x48, *b++ = 0xb8;	       /* movabs rax, hit */
	memcpy(b, &hit, 8);
	b += 8;
	*b++ = 0xff, *b++ = 0xd0; /* call rax */
	memcpy(b, pop, sizeof(pop));
	*at += TRAMP_HOOK_LEN;
	return 0;
}

int tramp_build(const struct tramp_hooks *hk, const struct tramp_region *r, const uint8_t *code,
		size_t avail, uint64_t tramp, uint8_t *out, size_t cap, size_t *out_len,
		size_t *taken)
{
	enum { MAX_INSNS = 16 };
	struct {
		size_t off, out; /* where it was, from r->start; where its copy starts */
		size_t rel;	 /* a jump: where its rel32 is in out, 0: none */
		uint64_t target;
	} v[MAX_INSNS];
	size_t off = 0, at = 0, n_insns = 0;
	int err = 0;

	if (r->entry_probe >= 0)
		err = emit_hook(hk, out, cap, &at, r->entry_probe, r->start);
	while (!err && off < r->min_len) {
		uint64_t addr = r->start + off;
		const struct tramp_exit *x = NULL;
		if (n_insns == MAX_INSNS)
			return -EBUSY;
		v[n_insns].off = off;
		v[n_insns].out = at;
		v[n_insns].rel = 0;
		for (size_t i = 0; i < r->nexits && !x; i++)
			x = r->exits[i].addr == addr ? &r->exits[i] : NULL;
		if (x)
			err = emit_hook(hk, out, cap, &at, x->probe, addr);
		struct relocate_info in;
		size_t n = 0;
		if (!err)
			err = relocate_insn(code + off, avail - off, addr, tramp + at, out + at,
					    cap - at, &n, &in);
		if (err)
			break;
		off += in.len;
		/* A call moved returns to the next instruction where it was:
		 * that must be left in place. An exit's window ends at it. */
		if (in.kind == RELOCATE_CALL && (off < r->min_len || r->exit_last))
			err = -EBUSY;
		/* An exit's window holds that exit last, and no other way out. */
		if (r->exit_last && ((x != NULL) != (off >= r->min_len) ||
				     (!x && (in.kind == RELOCATE_RET || in.kind == RELOCATE_JUMP))))
			err = -EBUSY;
		if (in.kind == RELOCATE_JUMP) {
			v[n_insns].rel = at + n - 4; /* jmp rel32 and jcc rel32 end with it */
			v[n_insns].target = in.target;
		} else if (in.kind == RELOCATE_CALL && in.target > r->start &&
			   in.target < r->start + r->min_len + TRAMP_CODE_MAX) {
			err = -EXDEV;
		}
		n_insns++;
		at += n;
	}
	/* Jumps within the region go to the moved copies; a jump into the
	 * middle of an instruction of it cannot be. */
	for (size_t i = 0; i < n_insns && !err; i++) {
		uint64_t t = v[i].target;
		if (!v[i].rel || t <= r->start || t >= r->start + off)
			continue;
		size_t k = 0;
		while (k < n_insns && r->start + v[k].off != t)
			k++;
		if (k == n_insns) {
			err = -EXDEV;
			break;
		}
		int32_t rel = (int32_t)((int64_t)v[k].out - (int64_t)(v[i].rel + 4));
		memcpy(out + v[i].rel, &rel, 4);
	}
	if (!err)
		err = relocate_jump(tramp + at, r->start + off, out + at, cap - at);
	*out_len = at + 5;
	*taken = off;
	return err;
}

int tramp_jumped_into(const uint8_t *code, size_t len, uint64_t addr, uint64_t lo_ins, uint64_t hi)
{
	size_t at, before = (size_t)(lo_ins - addr), after = (size_t)(hi - addr);

	return func_branch_into(code, before, addr, lo_ins + 1, hi, &at) == 1 ||
	       (after < len &&
		func_branch_into(code + after, len - after, hi, lo_ins + 1, hi, &at) == 1);
}

/* The length of the instruction at code (avail bytes), 0 when it does
 * not decode. */
static size_t insn_length(const uint8_t *code, size_t avail)
{
	struct relocate_info in;
	uint8_t scratch[RELOCATE_MAX];
	size_t n;

	return relocate_insn(code, avail, 0, 0, scratch, sizeof(scratch), &n, &in) == -EILSEQ
		   ? 0
		   : in.len;
}

size_t tramp_boundary(const uint8_t *code, size_t len, size_t min)
{
	size_t off = 0, n;

	for (; off < min && off < len; off += n)
		if (!(n = insn_length(code + off, len - off)))
			return SIZE_MAX;
	return off;
}

size_t tramp_window_start(const uint8_t *code, size_t len, size_t end)
{
	size_t off = 0, best = SIZE_MAX, n;

	for (; off < end; off += n) {
		if (!(n = insn_length(code + off, len - off)))
			return SIZE_MAX;
		if (end - off >= TRAMP_JUMP_LEN)
			best = off;
	}
	return best;
}

const char *tramp_exit_window(const uint8_t *code, size_t size, uint64_t addr, size_t entry_len,
			      const struct tramp_exit *x, uint64_t *start)
{
	size_t end = (size_t)(x->addr - addr) + x->len;
	size_t best = tramp_window_start(code, size, end);

	if (best == SIZE_MAX || best < entry_len)
		return "a return of it has fewer than 5 bytes of its own before it";
	if (tramp_jumped_into(code, size, addr, addr + best, addr + end))
		return "its code jumps into the last bytes before a return";
	*start = addr + best;
	return NULL;
}
