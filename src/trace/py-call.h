/*
 * Python calls seen through CPython's USDT probes (`recce trace
 * 'py:GLOB'`): function__entry and function__return fire for every
 * Python frame that starts, resumes, returns or yields, with the code's
 * file name, function name (both char * into the code object's strings)
 * and line. A call is named `module.function`, the module being the
 * file's name without ".py" (a package's `__init__.py` takes its
 * folder's name), and a pattern's glob is matched against that or, for
 * a glob without a dot, against the function's name alone.
 *
 * Ownership: values only; the strings are read from the target into the
 * record.
 */
#ifndef RECCE_TRACE_PY_CALL_H
#define RECCE_TRACE_PY_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace-event.h"
#include "trace/trace-hist.h"
#include "trace/trace-pattern.h"

struct usdt_probe;

/* What pairs an entry with its return on a thread: the address of the
 * function name the probe passes (the code object's, the same at both).
 * 0 when the probe's arguments are not in registers. */
uint64_t py_call_key(const struct usdt_probe *u, const uint64_t *gpr);

/* The strings of a Python call as the probe copied them at the hit
 * (uprobe_set_capture_strings() on the name's and the file's
 * registers): NULL when not copied. PY_CALL_CAPTURED bytes is where a
 * copy may have been cut. */
struct py_call_strings {
	const char *name, *file;
	size_t name_len, file_len;
	/* The call's own frame named as recce record names it
	 * ("__main__.Handler.handle"), when the probe read it; or NULL. */
	const char *qualified;
};
#define PY_CALL_CAPTURED 63

/*
 * Fills r (kind and time left to the caller) for a Python call at probe
 * u with registers gpr: function "py:module.function" (or with
 * s->qualified, "py:" and that, which a pattern may name too), and the
 * arguments file (its path) and line. The strings are those copied at
 * the hit, else (or when a copy may be cut) read from pid (0: none may
 * be). Returns 1 when one of the npat py: patterns of pats names the
 * call, 0 when none does (nor any a name cut short), -1 when its name
 * or file could not be read (copied at the hit by none, and gone).
 */
int py_call_fill(const struct usdt_probe *u, const uint64_t *gpr, const struct py_call_strings *s,
		 pid_t pid, const struct trace_pattern *pats, size_t npat, struct trace_record *r);

/* Whether one of the npat patterns of pats is a py: glob that only
 * the name recce record gives matches: two dots or more
 * ("app.Handler.handle", "http.server.*"), or the module __main__. The
 * probes then read each call's own frame to name it so. */
int py_call_wants_qualified(const struct trace_pattern *pats, size_t npat);

/* The registers of u's function name and file (enum x86_gpr), for the
 * probe to copy them: 0, or -1 when they are not in registers. */
int py_call_registers(const struct usdt_probe *u, int *name_reg, int *file_reg);

/* The module of a Python file path ("app" of "/srv/app.py", "pkg" of
 * "/srv/pkg/__init__.py") into buf. */
void py_call_module(const char *file, char *buf, size_t cap);

/* --hist of Python calls: a histogram per function name, made as names
 * come, at most PY_HISTS of them (the durations of later names are
 * counted in dropped). Owned by the caller: zero it, py_hists_release(). */
#define PY_HISTS 256
struct py_hists {
	struct py_hist *v;
	size_t n, cap;
	uint64_t dropped; /* calls of functions past the first PY_HISTS */
};

/* Adds a duration of the function named name ("py:app.handle"). Returns 0
 * or -ENOMEM. */
int py_hists_add(struct py_hists *h, const char *name, uint64_t ns);
/* Histogram i and its name, or NULL past the last. */
struct trace_hist *py_hists_get(struct py_hists *h, size_t i, const char **name);
void py_hists_release(struct py_hists *h);

#endif
