/*
 * Naming the code at an address of a process: the one policy that
 * record (resolve), top and trace follow, so that one address gets the
 * same name in a profile, on the live screen and in a trace.
 *
 * The policy:
 * - A return address (nonleaf) is looked up one byte back, inside the
 *   call instruction, so that a call at the very end of a function, or
 *   of an inlined block, is named for the caller and not for whatever
 *   follows it. A leaf address (where the sample hit) is looked up as is.
 * - In an ELF file: its symbols and DWARF give the function, the file and
 *   line, and the inlined frames (FRAME_SYMBOL).
 * - In anonymous memory: the process's perf map names JIT code
 *   (FRAME_JIT); it is read once per process, and only if it belongs to
 *   the process's user. JIT code it does not name (a runtime started
 *   without its perf map: node without --perf-basic-prof) is one frame
 *   per process, "[JIT: comm]", not one row per address.
 * - Otherwise a file or the vdso is named "object+0xoffset", by the file
 *   offset of the address itself (FRAME_OFFSET), and anything else is
 *   "[unknown]" (FRAME_UNKNOWN). Nothing is ever left out or made up.
 *
 * Ownership: frame_namer_new borrows the symbolizer and the process
 * registry (they must outlive it) and owns the perf maps it loads. Names
 * in a struct frame_name live as long as the symbolizer, or the perf map
 * until frame_namer_forget of its pid.
 */
#ifndef RECCE_PROC_FRAME_NAME_H
#define RECCE_PROC_FRAME_NAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symbolize.h"

#define FRAME_MAX_INLINE 16

enum frame_kind { FRAME_SYMBOL, FRAME_JIT, FRAME_OFFSET, FRAME_UNKNOWN };

struct proc_map;
struct proc_registry;

struct frame_name {
	enum frame_kind kind;
	const struct proc_map *map; /* the mapping, or NULL when none covers addr */
	uint64_t offset;	    /* addr's offset in map's file */
	const char *jit_name;	    /* FRAME_JIT */
	/* FRAME_SYMBOL: the function and its inlined frames, innermost
	 * first; each has a function name. */
	int nframes;
	struct sym_frame frames[FRAME_MAX_INLINE];
};

struct frame_namer;

struct frame_namer *frame_namer_new(struct symbolizer *sym, struct proc_registry *procs);
void frame_namer_free(struct frame_namer *n);

/* Names user address addr of pid (see the policy above). Never fails:
 * what cannot be named is FRAME_UNKNOWN. */
void frame_namer_user(struct frame_namer *n, pid_t pid, uint64_t addr, int nonleaf,
		      struct frame_name *out);

/* The FRAME_SYMBOL part of the policy for file offset off of f (already
 * one byte back for a return address): its frames that have a function
 * name, innermost first, into out; 0 when the innermost has none. Also
 * how a profile recorded without names is named later (fill-names.h). */
int frame_name_symbols(struct symbolizer *s, struct sym_file *f, uint64_t off,
		       struct sym_frame out[FRAME_MAX_INLINE]);

/* Forgets pid's perf map (the process exited; its pid may come back). */
void frame_namer_forget(struct frame_namer *n, pid_t pid);

/* What the caps of the perf maps read so far left out: entries dropped
 * and names cut (perfmap_losses()), over all processes. */
void frame_namer_jit_losses(const struct frame_namer *n, size_t *dropped, size_t *cut);

/* The processes whose JIT code was named "[JIT: comm]" for want of a perf
 * map entry, at most max into pids; returns how many. */
size_t frame_namer_jit_unnamed(const struct frame_namer *n, pid_t *pids, size_t max);

/* The one-line name of f: the innermost function, the JIT name,
 * "object+0xoffset" or "[unknown]". */
void frame_name_format(const struct frame_name *f, char *buf, size_t len);

#endif
