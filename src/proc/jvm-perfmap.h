/*
 * A running JVM asked to write its perf map now (`jcmd PID
 * Compiler.perfmap`, JDK 17 and later): it lists the code its JIT made,
 * in /tmp/perf-PID.map, which names that code in a profile (frame-name.h)
 * without restarting the JVM with perf-map options.
 *
 * jcmd is the JVM's own (the bin/jcmd beside the java it runs, when root
 * or the JVM's user owns it and no one else may write it), else the one
 * on PATH. A JVM's files are its user's to plant, so jcmd runs as the
 * JVM's user and group, never as recce's root; HotSpot answers that user,
 * and the map it writes is that user's, as a perf map must be for recce
 * to read it. At most 30 s.
 */
#ifndef RECCE_PROC_JVM_PERFMAP_H
#define RECCE_PROC_JVM_PERFMAP_H

#include <stddef.h>
#include <sys/types.h>

/* Whether process pid runs a JVM (maps libjvm.so). */
int jvm_is(pid_t pid);

/* Asks JVM pid for its perf map. Returns 0 once the map is written;
 * -ENOENT (no jcmd), -ETIMEDOUT, -ESRCH (gone), or -EIO with why (cap
 * bytes) holding jcmd's first line of complaint. */
int jvm_write_perfmap(pid_t pid, char *why, size_t cap);

#endif
