/*
 * Where a function's machine code leaves it: every `ret` and every jump
 * whose target lies outside the function (a tail call), found by decoding
 * the x86-64 code from its first byte to its last with Zydis. Call
 * tracing puts its return probes there instead of replacing the return
 * address on the stack (a uretprobe), which unwinders, Go's runtime and
 * stack-switching code read and trust.
 *
 * A linear decode is exact for compiled code, whose jump tables live in
 * .rodata; a byte that does not decode, or an instruction that runs past
 * the function's end, makes the whole function refused rather than
 * guessed at. An indirect jump may be a switch or a tail call through a
 * pointer, and a conditional one leaves only when taken: both are listed
 * as what they are, for the caller to decide.
 */
#ifndef RECCE_SYMBOLS_FUNC_EXITS_H
#define RECCE_SYMBOLS_FUNC_EXITS_H

#include <stddef.h>
#include <stdint.h>

enum func_exit_kind {
	FUNC_EXIT_RET = 1,  /* ret (also with an immediate) */
	FUNC_EXIT_TAIL,	    /* jmp to outside the function: a tail call */
	FUNC_EXIT_COND,	    /* jcc to outside: a tail call when taken */
	FUNC_EXIT_INDIRECT, /* jmp through a register or memory */
};

struct func_exit {
	uint32_t offset; /* from the function's first byte */
	uint8_t kind;	 /* enum func_exit_kind */
	uint8_t length;	 /* of the instruction */
};

struct func_exits {
	struct func_exit *v;
	size_t n, cap;
	size_t instructions; /* decoded */
};

/*
 * Decodes the len bytes of code of a function whose first byte is at
 * vaddr and lists its exits into *out (which it resets). Returns 0,
 * -EILSEQ when a byte does not decode or an instruction crosses the end
 * (*bad_offset then says where), or -ENOMEM.
 */
int func_exits_find(const uint8_t *code, size_t len, uint64_t vaddr, struct func_exits *out,
		    size_t *bad_offset);

void func_exits_release(struct func_exits *e);

/*
 * Go code: the offset just past the stack check that opens a function
 * (a compare of rsp, or of rsp minus the frame, with the goroutine's
 * stack guard at [r14+16], then a jbe to the call of runtime.morestack).
 * When the stack must grow, Go copies it and runs the function again from
 * its first byte, so a probe there would see one call twice; past the
 * check it sees each call once, with the stack pointer still where the
 * call left it. Returns 0 when the function has no such check.
 */
size_t func_go_entry(const uint8_t *code, size_t len);

#endif
