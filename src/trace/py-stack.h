/*
 * Python callers in the stacks of `trace 'py:GLOB' --stack` (and
 * `--caller`), and of any call traced with --stack in a CPython (a C
 * function under a Python one): the probes' program reads a thread's
 * Python frames at a call's entry (perf/uprobe.h's py_frames) in the
 * processes given their CPython's layout here, and the frames a hit carries are named
 * (proc/py-frames.h) and put where the interpreter ran them: each group
 * of a C call of the interpreter in place of its native frame
 * (_PyEval_EvalFrameDefault), innermost first, the groups the native walk
 * did not reach at the root end, as record puts them
 * (profile/resolve.c). A Python call's own frame (the innermost: a
 * frame set up, or a generator resumed) is not a caller and is not
 * shown.
 *
 * Ownership: py_stack_new() returns a heap object freed by
 * py_stack_free(); it borrows the registry, which must outlive it.
 */
#ifndef RECCE_TRACE_PY_STACK_H
#define RECCE_TRACE_PY_STACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/tracer.h"

struct proc_registry;
struct uprobe_set;
struct uprobe_hit;
struct py_stack;

struct py_stack *py_stack_new(struct proc_registry *procs);
void py_stack_free(struct py_stack *s);

/* Whether process pid is a CPython recce has a layout for (read into the
 * registry and looked at the first time). */
int py_stack_is_python(struct py_stack *s, pid_t pid);

/* Gives the program of u the layout of process pid if it is such a
 * CPython; once a process. */
void py_stack_watch(struct py_stack *s, struct uprobe_set *u, pid_t pid);

/* Names the native frame at address pc of a hit's process into *f. */
typedef void (*py_stack_name_fn)(void *arg, uint64_t pc, struct tracer_frame *f);

/*
 * The callers of the call at hit h (whose py_read is set; own: a Python
 * call's, whose own frame is the innermost) into out (at most max): its
 * native frames (the probed instruction's, then its callers', n in all,
 * at native), named by name(arg, ...), with the Python frames the hit
 * carries in place of those of the interpreter. Returns how many.
 */
size_t py_stack_callers(struct py_stack *s, const struct uprobe_hit *h, int own,
			const uint64_t *native, size_t n, py_stack_name_fn name, void *arg,
			struct tracer_frame *out, size_t max);

/* The Python function that called the one of hit h ("module.qualname"),
 * into buf; 0 when the hit carries none. */
int py_stack_caller(struct py_stack *s, const struct uprobe_hit *h, char *buf, size_t len);

/* The Python function of hit h's own frame, as recce record names it
 * ("module.qualname"), into buf; 0 when the hit carries none, or its
 * code could not be read. */
int py_stack_own(struct py_stack *s, const struct uprobe_hit *h, char *buf, size_t len);

/* The frames shown as "[unknown Python code]" (their code object could
 * not be read: the process exited, or freed it, before recce read the
 * hit), and whether the probes' program reads no Python frames (a kernel
 * without a BPF loop, or no BPF). */
void py_stack_get_stats(const struct py_stack *s, uint64_t *unread, int *off);

#endif
