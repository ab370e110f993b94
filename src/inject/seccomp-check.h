/*
 * Whether a thread's seccomp filters let recce load code through it. A
 * process under a filter that kills (or sends SIGSYS) on a system call
 * that the injector's stub, the C library's dlopen or recce's libraries
 * make would die of the injection; its threads are never borrowed. The
 * filters are read with PTRACE_SECCOMP_GET_FILTER (the thread stopped
 * under ptrace, recce with CAP_SYS_ADMIN) and run here, as the kernel
 * runs them, on each such call with the arguments recce's code passes.
 */
#ifndef RECCE_INJECT_SECCOMP_CHECK_H
#define RECCE_INJECT_SECCOMP_CHECK_H

#include <sys/types.h>

/* For a thread stopped under ptrace: 0 when it has no filter or its
 * filters let every such call through (or fail it cleanly, with an
 * error number, where the caller copes); 1 when one would kill the
 * thread or the process, with *what the call's name; -EACCES when the
 * filters cannot be read (not root); -errno otherwise. */
int seccomp_check(pid_t pid, pid_t tid, const char **what);

#endif
