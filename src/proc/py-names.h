/*
 * Python frames in sampled stacks. A stack the sampler aggregates is its
 * native frames, leaf first; a sample of a CPython thread goes on with
 * PY_STACK_MARK and its Python frames, innermost first, each the id of a
 * (function, file, line) in the registry's table of them, PY_STACK_ENTRY
 * set on the outermost frame of each C call of the interpreter. The
 * resolver puts each such group of Python frames in place of the native
 * frame of that call (_PyEval_EvalFrameDefault), innermost group first.
 *
 * Ownership: py_names_new() returns a heap object freed by
 * py_names_free(); the names it returns live as long as it.
 */
#ifndef RECCE_PROC_PY_NAMES_H
#define RECCE_PROC_PY_NAMES_H

#include <stdint.h>
#include <string.h>

/* Above the kernel's PERF_CONTEXT_* markers and below the off-CPU
 * markers (offcpu-reason.h): no address can be one. */
#define PY_STACK_MARK  ((uint64_t)-3900)
#define PY_STACK_ENTRY (1ull << 40)
#define PY_STACK_ID    (PY_STACK_ENTRY - 1)

/* The native function that runs Python frames (one C call of the
 * interpreter, 3.11 on). */
#define PY_EVAL_FUNCTION "_PyEval_EvalFrameDefault"

/* Whether a native function's name is that function's, or its cold part's
 * (FUNC.cold, as a full symbol table names it and recce names it in a
 * stripped file: where its tracing and probe paths run). */
static inline int py_eval_function(const char *name)
{
	size_t n = sizeof(PY_EVAL_FUNCTION) - 1;

	return name && strncmp(name, PY_EVAL_FUNCTION, n) == 0 &&
	       (name[n] == 0 || strcmp(name + n, ".cold") == 0);
}

struct py_names;

struct py_names *py_names_new(void);
void py_names_free(struct py_names *t);

/* The id (from 1) of function name in file at line, made on first use;
 * 0 when out of memory or ids. */
uint64_t py_names_id(struct py_names *t, const char *name, const char *file, int line);

/* What id names; returns 0, or -ENOENT for an id not made. */
int py_names_get(const struct py_names *t, uint64_t id, const char **name, const char **file,
		 int *line);

#endif
