/*
 * JIT symbols from /tmp/perf-PID.map, the text format that the BEAM
 * (+JPperf true), Node (--perf-basic-prof), the JVM agents and CPython 3.12
 * write: one "START SIZE NAME" line per function, addresses in hex.
 *
 * The file is untrusted input: it is only read when it is a regular file
 * owned by the target's user (or root), lines are bounds-checked, and a
 * malformed line is skipped, never fatal. Later lines override earlier ones
 * for the same address, as JITs append when they recompile.
 *
 * Ownership: heap object freed by perfmap_free(); names live as long as it.
 */
#ifndef RECCE_PERFMAP_H
#define RECCE_PERFMAP_H

#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/* Loads the map file of pid (path NULL means /tmp/perf-PID.map), accepting
 * it only if owned by uid or by root. Returns 0 and *out, -ENOENT if there
 * is no file, -EPERM if its owner is wrong, -errno otherwise. */
int perfmap_load(pid_t pid, uid_t uid, const char *path, struct perfmap **out);
void perfmap_free(struct perfmap *m);
size_t perfmap_count(const struct perfmap *m);

/* What the caps cost: entries left out (past 1,000,000 entries or 64 MiB
 * of names; reading stops after 4,000,000 lines, so this is a lower bound)
 * and names cut to 512 bytes. */
void perfmap_losses(const struct perfmap *m, size_t *dropped, size_t *cut);

/* The name of the i-th function of the file (any order), or NULL past
 * the last: for searching the map by name. */
const char *perfmap_name(const struct perfmap *m, size_t i);

/* The name of the JIT function covering addr, or NULL. */
const char *perfmap_lookup(const struct perfmap *m, uint64_t addr, uint64_t *start);

#endif
