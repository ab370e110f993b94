/*
 * Trampolines for in-process probes: a region of a function (its entry,
 * or the last instructions before one of its exits) moved elsewhere
 * (inject/relocate), with calls of a recorder inserted: before all for an
 * entry, and just before each exit moved. A call of the recorder pushes
 * the nine registers a call may change, calls recorder(id, frame) with
 * frame pointing at them (r11 r10 rax r9 r8 rcx rdx rsi rdi, then what
 * was on the stack: at an entry or an exit, the return address), pops
 * them and goes on; the vector registers are the recorder's to keep.
 *
 * Also here, the checks of where a region may be: the instruction
 * boundaries it must start and end on, and the jumps from the rest of the
 * function that would land inside it.
 */
#ifndef RECCE_INJECT_TRAMPOLINE_H
#define RECCE_INJECT_TRAMPOLINE_H

#include <stddef.h>
#include <stdint.h>

#define TRAMP_JUMP_LEN 5  /* the jump that replaces a region */
#define TRAMP_HOOK_LEN 48 /* bytes of one call of the recorder */
#define TRAMP_CODE_MAX 16 /* bytes a region replaces at most */

/* An exit of a function to hook: a ret, or a jump out of it. */
struct tramp_exit {
	uint64_t addr; /* of the instruction */
	uint32_t len;  /* its length */
	int probe;     /* the caller's number for it */
};

/* A region: its first instruction and how much of it moves, and the
 * hooks its trampoline calls. */
struct tramp_region {
	uint64_t start;
	size_t min_len;			/* at least this many bytes are moved */
	int entry_probe;		/* a hook before all, or -1 */
	const struct tramp_exit *exits; /* a hook before each of these moved */
	size_t nexits;
	int exit_last; /* an exit's window: it is the last instruction, and the only way out */
};

/* What a hook calls, and how it is numbered: number() gives the id the
 * recorder receives (NULL: every id is 0, for a plan). */
struct tramp_hooks {
	uint64_t recorder;
	int (*number)(void *arg, int probe, uint64_t ip, uint32_t *id);
	void *arg;
};

/*
 * The trampoline of region r at address tramp, into out (cap bytes): the
 * hooks and the moved instructions, then a jump back. code holds the
 * bytes from r->start (avail of them). A jump from one moved instruction
 * to another is aimed at the moved copy (at its hook, for an exit). Sets
 * *out_len, and *taken to the bytes moved. Returns 0 or -errno:
 * relocate_insn()'s, -EXDEV for a jump into the middle of an instruction
 * moved, -EBUSY for a call or an exit the region cannot hold, or
 * number()'s.
 */
int tramp_build(const struct tramp_hooks *hk, const struct tramp_region *r, const uint8_t *code,
		size_t avail, uint64_t tramp, uint8_t *out, size_t cap, size_t *out_len,
		size_t *taken);

/* Whether a jump of the function (code, len bytes at addr) from outside
 * [lo, hi) lands in (lo, hi): into the middle of a region there. Direct
 * jumps only: a jump table is not read. */
int tramp_jumped_into(const uint8_t *code, size_t len, uint64_t addr, uint64_t lo, uint64_t hi);

/* The first instruction boundary of code (len bytes) at or past min;
 * SIZE_MAX when a byte does not decode. */
size_t tramp_boundary(const uint8_t *code, size_t len, size_t min);

/* The last instruction boundary at least TRAMP_JUMP_LEN bytes before end;
 * SIZE_MAX when none. */
size_t tramp_window_start(const uint8_t *code, size_t len, size_t end);

/* Why the window before exit x of the function (code, size bytes at addr,
 * whose entry region takes entry_len bytes) cannot be a region, or NULL;
 * its first instruction in *start. */
const char *tramp_exit_window(const uint8_t *code, size_t size, uint64_t addr, size_t entry_len,
			      const struct tramp_exit *x, uint64_t *start);

#endif
