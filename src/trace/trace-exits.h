/*
 * Where the tracer sees a function return without touching its stack: the
 * file offsets of the function's exits (every `ret`, every jump to outside
 * it), read from its object file and decoded (symbols/func-exits.h). A
 * plain uprobe on each exit fires as the function leaves, with the stack
 * pointer where the call put the return address, so the tracer pairs it
 * with its call by that address. Nothing in the target's stack changes:
 * unwinders, Go's runtime and coroutine switches see their own frames.
 *
 * A conditional jump out is probed too, and counts as an exit only when
 * its condition holds in the flags where the target stopped; an indirect
 * jump counts when the address it jumps to lies outside the function (a
 * tail call through a pointer, not a switch). The few jumps whose
 * condition or operand is not read here (loop, jcxz, another address
 * size) are left unprobed: a call that leaves that way is closed by the
 * next event proving it over, as an unwound one is.
 */
#ifndef RECCE_TRACE_EXITS_H
#define RECCE_TRACE_EXITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/func-exits.h"
#include "trace/trace-pattern.h"

struct trace_exit {
	uint64_t offset;      /* in the object file */
	struct func_exit how; /* what the exit is, and what decides it */
};

struct trace_exits {
	struct trace_exit *v;
	size_t n, cap;
	size_t unprobed; /* jumps out that cannot be decided */
};

/*
 * Lists the exits of fn into *out (reset first). Returns 0 (n may be 0 for
 * a function that never returns), -ENODATA when the symbol has no size
 * (where the function ends is unknown), -EFBIG when it claims more bytes
 * than any compiled function has, -EILSEQ when its code does not decode
 * (*bad then holds the offset of the byte, from the function's start),
 * -EIO when it cannot be read, or -ENOMEM.
 */
int trace_exits_find(const struct trace_fn *fn, struct trace_exits *out, size_t *bad);

void trace_exits_release(struct trace_exits *e);

/* Why the exits of fn cannot be found, as words that begin with
 * TRACE_EXITS_UNKNOWN ("its returns cannot be found: its symbol has no
 * size"), or NULL when they can (or only reading them failed). */
#define TRACE_EXITS_UNKNOWN "its returns cannot be found"
const char *trace_exits_unknown(const struct trace_fn *fn);

/*
 * --fast --return: the exits of fn (at addr in the process) a trampoline
 * hooks: its rets and jumps out, into *out (a heap array, n of them; each
 * .probe is its index in ex, which holds them all). Conditional and
 * indirect jumps out are left, counted in *undecided. Returns
 * trace_exits_find()'s errors.
 */
struct tramp_exit;
int trace_exits_fast(const struct trace_fn *fn, uint64_t addr, struct trace_exits *ex,
		     struct tramp_exit **out, size_t *n, size_t *undecided);

/* Why the kernel would refuse a uprobe at file offset of fn's object
 * (func_unprobeable()), or NULL. */
const char *trace_entry_unprobeable(const struct trace_fn *fn, uint64_t offset);

/* Why fn must not be probed in process pid, whose copy of its code
 * (at addr) differs from its file in a byte that is not a breakpoint:
 * patched (recce patch, another tool). A uprobe steps the file's
 * instruction, not the one the process has, so it would run half of
 * each. NULL when they match, or when the process cannot be read. */
const char *trace_code_changed(const struct trace_fn *fn, pid_t pid, uint64_t addr);

/* The file offset to probe for fn's calls: its entry, or in Go code the
 * instruction past its stack check (see func_go_entry()). */
uint64_t trace_entry_offset(const struct trace_fn *fn);

#endif
