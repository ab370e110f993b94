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
 * with what they read (the condition, the register or memory operand),
 * and func_exit_taken() decides, from the registers where the target
 * stopped on the jump, whether this time it leaves.
 */
#ifndef RECCE_SYMBOLS_FUNC_EXITS_H
#define RECCE_SYMBOLS_FUNC_EXITS_H

#include <stddef.h>
#include <stdint.h>

#include "util/x86-regs.h"

enum func_exit_kind {
	FUNC_EXIT_RET = 1,  /* ret (also with an immediate) */
	FUNC_EXIT_TAIL,	    /* jmp to outside the function: a tail call */
	FUNC_EXIT_COND,	    /* jcc to outside: a tail call when taken */
	FUNC_EXIT_INDIRECT, /* jmp through a register or memory */
};

/* FUNC_EXIT_COND: the condition, x86's 4-bit code (o no b ae e ne be a
 * s ns p np l ge le g) or one of these. */
enum {
	FUNC_COND_RCXZ = 16, /* jrcxz */
	FUNC_COND_ECXZ,	     /* jecxz */
	FUNC_COND_UNKNOWN,   /* loop and its kin: never decided, not probed */
};

/* FUNC_EXIT_INDIRECT: where the target comes from. With reg, the
 * register holds it; otherwise it is the 8 bytes at base + index * scale
 * + disp (base X86_NONE with rip set: rip-relative, from the next
 * instruction). unknown: an operand not read here (another address
 * size, a segment): never decided, not probed. */
struct func_jump {
	uint8_t reg;	     /* enum x86_gpr, or X86_NONE for memory */
	uint8_t base, index; /* enum x86_gpr or X86_NONE */
	uint8_t scale;
	uint8_t rip, unknown;
	int64_t disp;
};

struct func_exit {
	uint32_t offset;       /* from the function's first byte */
	uint8_t kind;	       /* enum func_exit_kind */
	uint8_t length;	       /* of the instruction */
	uint8_t cond;	       /* FUNC_EXIT_COND: the condition */
	uint8_t refused;       /* the kernel puts no uprobe on it (func_unprobeable()) */
	struct func_jump jump; /* FUNC_EXIT_INDIRECT: the operand */
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
 * Whether a relative jump, conditional jump or call of the function
 * (len bytes of code whose first byte is at vaddr) lands in [lo, hi):
 * code replaced there would be entered in its middle. Returns 1 (and the
 * offset of the first such instruction in *where), 0, or -EILSEQ when a
 * byte does not decode.
 */
int func_branch_into(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t lo, uint64_t hi,
		     size_t *where);

/* Whether an exit can be probed and decided where it runs (conditions
 * and operands func_exit_taken() knows); one that cannot is left
 * unprobed. */
int func_exit_decidable(const struct func_exit *e);

/*
 * Why the kernel refuses a uprobe on the instruction at code (len bytes
 * available), as Linux's x86 uprobes do: a lock prefix, a segment
 * override of cs, ds, es or ss (CET's "notrack" is a ds prefix), or an
 * instruction that traps or needs privilege. NULL when it accepts it, or
 * when the bytes do not decode (the kernel then decides).
 */
const char *func_unprobeable(const uint8_t *code, size_t len);

/* Reads the 8 bytes at addr of the stopped target into *val: 0 or -errno. */
typedef int (*func_read_fn)(void *arg, uint64_t addr, uint64_t *val);

/*
 * Whether exit e, of a function of size bytes, leaves it this time, from
 * the registers where the target stopped on it (ip: the exit's own
 * address; gpr by enum x86_gpr; flags: rflags). A ret and a direct jump
 * out always leave; a conditional jump when its condition holds; an
 * indirect jump when its target lies outside the function (read, for a
 * memory operand, through read). Returns 1, 0, or -errno when the
 * target's memory cannot be read (the jump is then not decided).
 */
int func_exit_taken(const struct func_exit *e, uint64_t size, uint64_t ip, const uint64_t *gpr,
		    uint64_t flags, func_read_fn read, void *arg);

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
