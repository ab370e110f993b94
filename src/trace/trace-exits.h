/*
 * Where the tracer sees a function return without touching its stack: the
 * file offsets of the function's exits (every `ret`, every jump to outside
 * it), read from its object file and decoded (symbols/func-exits.h). A
 * plain uprobe on each exit fires as the function leaves, with the stack
 * pointer where the call put the return address, so the tracer pairs it
 * with its call by that address. Nothing in the target's stack changes:
 * unwinders, Go's runtime and coroutine switches see their own frames.
 *
 * Conditional and indirect jumps out of a function are not probed (the
 * probe cannot tell a taken branch from one that falls through, nor a
 * switch from a tail call); a call that leaves that way is closed by the
 * next event proving it over, as an unwound one is.
 */
#ifndef RECCE_TRACE_EXITS_H
#define RECCE_TRACE_EXITS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace-pattern.h"

struct trace_exit {
	uint64_t offset; /* in the object file */
	int tail;	 /* a jump to another function, not a ret */
};

struct trace_exits {
	struct trace_exit *v;
	size_t n, cap;
	size_t unprobed; /* conditional or indirect jumps out */
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

/* The file offset to probe for fn's calls: its entry, or in Go code the
 * instruction past its stack check (see func_go_entry()). */
uint64_t trace_entry_offset(const struct trace_fn *fn);

#endif
