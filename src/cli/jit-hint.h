/*
 * What recce says of a JIT runtime's code, for every subcommand that meets
 * it: how the runtime named comm writes a perf map (record, top: to name
 * its code), and the function a perf map entry names, as a trace pattern
 * would spell it (trace: to say the code is JIT code, not in a file).
 */
#ifndef RECCE_CLI_JIT_HINT_H
#define RECCE_CLI_JIT_HINT_H

#include <stddef.h>
#include <sys/types.h>

/* How the runtime comm (process pid) writes a perf map, as words that end
 * a sentence; buf (cap bytes) may hold them. */
const char *jit_hint_perf_map(const char *comm, pid_t pid, char *buf, size_t cap);

/* Whether comm is a runtime that makes JIT code (node, java, beam.smp). */
int jit_hint_runtime(const char *comm);

/* Whether a perf map entry's name names pattern (fnmatch): as written, or
 * as the function alone: the BEAM's "$mod:fun/arity" without "$" and
 * arity, V8's "JS:*fib /app.js:1:23" as "fib", a JVM's "long Hot.fib(int)"
 * as "Hot.fib". */
int jit_hint_name_matches(const char *pattern, const char *name);

#endif
