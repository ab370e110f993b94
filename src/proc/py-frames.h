/*
 * The Python frames of a running CPython, read from outside, as py-spy
 * reads them: _PyRuntime (an exported symbol of the program or its
 * libpython) leads to the interpreters, their thread states, and each
 * thread's chain of frames; a frame's code object gives its function's
 * qualified name and file, and the instruction it runs, looked up in its
 * line table, the line. The layouts are CPython's own, per version
 * (3.11 and 3.12, taken from their DWARF; 3.13 from the _Py_DebugOffsets
 * it publishes); another version is named by py_reader_version() and
 * not read.
 *
 * The target's memory is hostile: every pointer is read with
 * process_vm_readv, every length and count is bounded, and a chain that
 * does not end is cut. Reading a running thread's frames can meet them
 * changing: the caller stops the threads first (dump), or counts what
 * fails to read.
 *
 * Ownership: py_reader_open() returns a heap object freed by
 * py_reader_free(); it borrows the registry and symbolizer, which must
 * outlive it. Names and files in the frames belong to the reader.
 */
#ifndef RECCE_PROC_PY_FRAMES_H
#define RECCE_PROC_PY_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_registry;
struct symbolizer;
struct py_reader;

#define PY_MAX_FRAMES 512 /* a deeper chain is cut there */

struct py_frame {
	const char *name; /* "module.qualname" ("qualname" when the module is unknown) */
	const char *file; /* co_filename */
	int line;	  /* the line being run; 0 when the table does not say */
	/* The outermost Python frame of one C call of the interpreter
	 * (_PyEval_EvalFrameDefault): the frames from the thread's innermost
	 * up to this one ran in the innermost such native frame, the next
	 * group in the next, and so on. */
	int entry;
};

struct py_thread {
	pid_t tid;   /* the thread's native id */
	uint64_t ts; /* its thread state's address */
	int holds_gil;
	/* Its threading.Thread's name ("worker-1"), read from the object its
	 * Thread._bootstrap_inner frame runs for; "" when it has none (the
	 * main thread, a thread started by _thread) or it could not be read. */
	char name[64];
	struct py_frame frames[PY_MAX_FRAMES]; /* innermost first */
	size_t n;
	int cut; /* the chain could not be read to its end */
};

/* Finds the CPython in process pid (scanned into procs already).
 * Returns 0 with *out; -ENOENT when no module of it is a CPython (exports
 * _PyRuntime, or before 3.7 is a python file with Py_Initialize);
 * -ENOMEM. A reader of a version recce has no layout for is returned all
 * the same: py_reader_threads() then fails with -ENOTSUP. */
int py_reader_open(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
		   struct py_reader **out);

/* The interpreter's version as "3.11.2" (from Py_Version), "3.X" (from
 * its file name), or "" when not known. */
const char *py_reader_version(const struct py_reader *r);

/* Every Python thread of the main interpreter, now: *out (freed with
 * free()) and its count, at most max (the process's threads: a list
 * longer than that, or that comes back on itself, is the target's memory
 * lying, and is cut). Returns 0; -ENOTSUP (a version without a layout);
 * -EFAULT (the runtime's state could not be read: it is not initialized,
 * or is being torn down); -ENOMEM. */
int py_reader_threads(struct py_reader *r, size_t max, struct py_thread **out, size_t *n);

/* Whether a thread blocked in futex(2) on address uaddr waits for the GIL:
 * the word is in the condition or mutex of the GIL's state that the last
 * py_reader_threads() found. */
int py_reader_gil_futex(const struct py_reader *r, uint64_t uaddr);

/* Where a thread's frames are, for a reader at sample time (a BPF
 * program): the runtime's address and the byte offsets of what leads
 * from it to each thread's chain of frames (fields as in py-frames.c). */
struct py_chain {
	uint64_t runtime;
	uint32_t rt_interp_head, interp_threads_head, ts_next, ts_native_tid;
	int32_t ts_cframe; /* -1: the current frame is in the thread state */
	uint32_t ts_frame;
	uint32_t fr_code, fr_func, fr_previous, fr_instr, fr_owner;
	uint32_t fr_globals;	/* 0: not known */
	int32_t fr_is_entry;	/* -1: an entry is marked by a shim frame after it */
	uint32_t fr_size;	/* a frame's bytes to its last field above */
	uint32_t func_module;	/* a function's __module__ */
	uint32_t code_qualname; /* a code object's co_qualname */
};

/* The chain's layout of r's CPython. Returns 0, or -ENOTSUP for a version
 * without a layout. */
int py_reader_chain(const struct py_reader *r, struct py_chain *out);

/* One frame, as a chain holds it: code object `code` running the
 * instruction at `instr`, of a function whose __module__ is the str at
 * `module` (0: not known; then the module is named by the __name__ of
 * `globals`, the frame's globals, when not 0), owned by a generator with
 * gen. `qualname`,
 * when not 0, is the code object's co_qualname as read with the frame: a
 * code object known at `code` with another is taken for a new one made
 * where a freed one was, and read again. Fills *f (entry left 0) and
 * returns 0; returns 1 for a frame being set up, which has run nothing
 * yet and is not shown; -EFAULT when the code object cannot be read;
 * -ENOTSUP. */
int py_reader_frame(struct py_reader *r, uint64_t code, uint64_t instr, uint64_t module,
		    uint64_t globals, uint64_t qualname, int gen, struct py_frame *f);

void py_reader_free(struct py_reader *r);

#endif
