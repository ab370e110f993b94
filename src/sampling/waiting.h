/*
 * Where a thread that waits in a system call waits, read without stopping
 * it: /proc/PID/task/TID/syscall gives the stack pointer and the program
 * counter it entered the kernel with, /proc/PID/mem the top of its stack,
 * and the DWARF unwinder (unwind.h) walks them as it walks a sample.
 * Nothing else of its registers is known, so a walk needs call frame
 * information that finds each frame from the stack pointer (as a C library
 * built without frame pointers has); it stops at the first frame that needs
 * the frame pointer, leaving the callers above it out: a stack that is
 * short, never a made-up one.
 *
 * `recce record --event offcpu|wall` uses it for the threads that wait when
 * recording starts: a blocked thread's user registers do not change until
 * it runs again, so this is the stack a switch out would have given.
 */
#ifndef RECCE_WAITING_H
#define RECCE_WAITING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct unwinder;

/*
 * Fills frames (leaf first, PERF_CONTEXT_USER first) with the user stack of
 * tid of pid if it is blocked in a system call. Returns the number of
 * frames, 0 when the thread runs (or is not in a system call), or -errno
 * when its files cannot be read (-ESRCH gone, -EACCES not allowed).
 */
int waiting_stack(struct unwinder *u, pid_t pid, pid_t tid, uint64_t *frames, size_t max);

#endif
