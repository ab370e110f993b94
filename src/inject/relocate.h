/*
 * Moving a function's first instructions elsewhere, for an entry
 * trampoline: the instructions a 5-byte jump replaces are copied to the
 * trampoline, each fixed for its new address, followed by a jump back to
 * the first instruction left in place. Decoded with Zydis.
 *
 * Fixed on the way: RIP-relative memory operands (their displacement
 * re-aimed), relative jumps and conditional jumps (re-encoded in their
 * 32-bit form to the same target), and calls (made as a push of the
 * original return address and a jump, so that the callee returns, and
 * unwinds, into the original function). Refused: an instruction that
 * does not decode, a relative form with no 32-bit equivalent (loop,
 * jrcxz, xbegin), a jump from the moved instructions back into them, and
 * any target beyond a 32-bit reach of the new place.
 */
#ifndef RECCE_INJECT_RELOCATE_H
#define RECCE_INJECT_RELOCATE_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes relocate_entry() writes for min_len <= 16. */
#define RELOCATE_MAX 64

/* What an instruction moved was. */
enum relocate_kind {
	RELOCATE_PLAIN = 0,
	RELOCATE_JUMP, /* a relative jump or conditional jump: target says where */
	RELOCATE_CALL, /* a relative call */
	RELOCATE_RET,
};

struct relocate_info {
	size_t len; /* of the instruction where it was */
	enum relocate_kind kind;
	uint64_t target; /* RELOCATE_JUMP, RELOCATE_CALL */
};

/*
 * Moves the one instruction at code (avail bytes, at address addr) to
 * address to: writes it into out (cap bytes), sets *out_len and *info.
 * Returns 0, -EILSEQ, -ENOTSUP, -ERANGE or -ENOSPC as relocate_entry().
 * A call is made as a push of addr + its length and a jump: the caller
 * makes sure that address is original code.
 */
int relocate_insn(const uint8_t *code, size_t avail, uint64_t addr, uint64_t to, uint8_t *out,
		  size_t cap, size_t *out_len, struct relocate_info *info);

/* A 5-byte jmp at address at to target into out: 0, -ERANGE, -ENOSPC. */
int relocate_jump(uint64_t at, uint64_t target, uint8_t *out, size_t cap);

/*
 * Moves whole instructions of code (avail bytes, at address from) until
 * at least min_len bytes are taken, to address to: writes them into out
 * (cap bytes) and the jump back, sets *out_len and *taken (the bytes
 * taken at from). Returns 0; -EILSEQ when an instruction does not decode
 * (*taken says where); -ENOTSUP for a relative form that cannot move;
 * -EXDEV for a jump back into the moved bytes; -ERANGE for a target out
 * of reach; -ENOSPC when out is too small.
 */
int relocate_entry(const uint8_t *code, size_t avail, uint64_t from, size_t min_len, uint64_t to,
		   uint8_t *out, size_t cap, size_t *out_len, size_t *taken);

#endif
