/*
 * Go's function table (.gopclntab), which every Go binary keeps even when
 * stripped of its symbols: the runtime needs it for its own tracebacks.
 * Read here for what `go tool pprof` reads it for: the name and the
 * address range of every function, the file and line of every
 * instruction, and the calls the compiler inlined there, so that a
 * stripped Go program (as distributions ship them) is profiled by name,
 * line and inlined call; and for what the runtime reads it for, the
 * size of each frame at each instruction, so that a Go stack is unwound
 * exactly where frame pointers are not yet (or no longer) pushed. In a
 * position-independent executable an external linker made (cgo's), the
 * table is no section of its own but lies inside .data.rel.ro, where
 * gopclntab_find() finds it. Formats of Go 1.2 through 1.24 (magics
 * 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1); the table is the
 * binary's, so it is untrusted: every offset is checked against its
 * length.
 */
#ifndef RECCE_SYMBOLS_GOPCLNTAB_H
#define RECCE_SYMBOLS_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* The offset in data (len bytes) of a table that is not a section of
 * its own: an external linker building a position-independent
 * executable puts it inside .data.rel.ro. It is found by its header (a
 * magic of Go 1.16 or later, 8-byte aligned, whose parts lie within
 * data and which names at least one function). -ENOENT when there is
 * none. */
int64_t gopclntab_find(const uint8_t *data, size_t len);

/* Calls fn(arg, lo, hi, name) for each function of the table of len
 * bytes at data (the section's contents; addresses are the binary's
 * virtual addresses), name pointing into data, NUL-terminated. Stops at
 * fn's first non-zero return and returns it; else the number of
 * functions, or -EINVAL when data is not a table this reader knows. */
int gopclntab_functions(const uint8_t *data, size_t len,
			int (*fn)(void *arg, uint64_t lo, uint64_t hi, const char *name),
			void *arg);

/* The source file and line of the instruction at pc (a virtual address)
 * in the table of len bytes at data: 0, *file pointing into data, or
 * -ENOENT (no function there, or no line for pc), -ENOTSUP (a Go 1.2-1.15
 * table: names only), -EINVAL (not a table this reader knows, or one
 * whose line tables are out of bounds). */
int gopclntab_line(const uint8_t *data, size_t len, uint64_t pc, const char **file, int *line);

/* One frame at a pc: names and files point into the table. */
struct gopclntab_frame {
	const char *function; /* NULL if the table's name is out of bounds */
	const char *file;     /* NULL (and line 0) when the table has no line */
	int line;
};

/* The frames at pc, innermost first: the functions the compiler inlined
 * there (Go 1.18+, when gofunc is the module's moduledata.gofunc and
 * read(arg, vaddr, buf, n) reads the binary's bytes at a virtual
 * address, 0 or -errno), then the function whose code it is, each with
 * the file and line it is at: the inlined function's own line, then each
 * caller's at the call. At most cap frames (the outermost always among
 * them). Returns how many, -ENOENT (no function there), -ENOTSUP (1.2-
 * 1.15) or -EINVAL. */
int gopclntab_frames(const uint8_t *data, size_t len, uint64_t gofunc,
		     int (*read)(void *arg, uint64_t vaddr, void *buf, size_t n), void *arg,
		     uint64_t pc, struct gopclntab_frame *out, int cap);

/* How a walk steps out of the frame of the Go function at pc. */
enum gopclntab_step {
	GOPCLNTAB_FRAME,     /* by *sp: its return address lies at SP + *sp */
	GOPCLNTAB_INJECTED,  /* as FRAME, but the return address is the very pc where
				the caller was interrupted (asyncPreempt, sigpanic0) */
	GOPCLNTAB_OUTERMOST, /* it begins a goroutine's or a thread's stack */
	GOPCLNTAB_SWITCH,    /* it moves SP to or from another stack, or writes it:
				the table gives no step */
};

/* The step out of the frame at pc (pc itself for the interrupted
 * frame, a return address minus one for a caller) from its pc-value
 * table of stack offsets: an enum gopclntab_step with *sp for FRAME
 * and INJECTED, -ENOENT (no function there, or pc past its table),
 * -ENOTSUP (1.2-1.15) or -EINVAL. */
int gopclntab_step(const uint8_t *data, size_t len, uint64_t pc, int64_t *sp);

/* Whether the function named name is where Go's own tracebacks and
 * profiles end a stack: one the runtime marks TOPFRAME, which a thread or
 * goroutine starts in (goexit, mstart, rt0_go), or one that switched to
 * the thread's own stack to run the scheduler or grow a stack (mcall,
 * morestack): the frames past it are not the goroutine's. An ABI0
 * wrapper's ".abi0" is left out. */
int gopclntab_stack_top(const char *name);

/* moduledata.gofunc of the module whose table of len bytes at data sits
 * at virtual address vaddr, found in md (md_len bytes: the binary's
 * .noptrdata, where the linker puts the first module's moduledata): the
 * base of the inline trees' offsets. 0, -ENOENT, -ENOTSUP (before 1.18,
 * or a 32-bit table) or -EINVAL. */
int gopclntab_gofunc(const uint8_t *data, size_t len, uint64_t vaddr, const uint8_t *md,
		     size_t md_len, uint64_t *gofunc);

/* Calls fn(arg, pc) at every pc inside a function where its file, line
 * or inlined calls may change (1.16+), stopping at fn's first non-zero
 * return (returned). 0, -ENOTSUP or -EINVAL. */
int gopclntab_boundaries(const uint8_t *data, size_t len, int (*fn)(void *arg, uint64_t pc),
			 void *arg);

#endif
