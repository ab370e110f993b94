/*
 * Changing a live process's machine code safely: every thread is stopped;
 * no thread's program counter, and no return address on any thread's
 * stack, may lie in a guarded range (the bytes being replaced, past
 * their first, where a thread would resume in the middle of the new
 * code); the bytes there must still be what the caller expects; then all
 * edits are written through /proc/PID/mem, read back, and every thread
 * goes on. While a thread is in a guarded range, the process runs on
 * and is tried again, until a deadline.
 *
 * The stacks are scanned word by word from each thread's stack pointer
 * to the end of its stack mapping, so a stray word that only looks like
 * a return address delays a change, but never lets an unsafe one
 * through.
 */
#ifndef RECCE_INJECT_CODE_WRITE_H
#define RECCE_INJECT_CODE_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CODE_EDIT_MAX 64

struct code_edit {
	uint64_t addr;
	size_t len; /* at most CODE_EDIT_MAX */
	uint8_t old[CODE_EDIT_MAX], new[CODE_EDIT_MAX];
};

/* No program counter, nor return address, in [lo, hi). */
struct code_guard {
	uint64_t lo, hi;
};

struct code_write_stats {
	int attempts;
	uint64_t stopped_ns;	 /* the process stayed stopped, in the attempt that wrote */
	uint64_t stopped_max_ns; /* the longest of all attempts */
	pid_t busy_tid;		 /* the last thread found in a guarded range */
	uint64_t busy_addr;	 /* its program counter or return address there */
	int busy_on_stack;	 /* busy_addr is a return address */
	size_t threads;		 /* stopped in the attempt that wrote */
};

/*
 * Makes the n edits of pid at once, guarded by the ng ranges, trying for
 * timeout_ms. Returns 0; -ESTALE when the bytes found differ from an
 * edit's old bytes (edit index in *stale); -EBUSY when a thread stayed in
 * a guarded range; -EIO when the bytes read back differ; or stop_all()'s
 * errors.
 */
int code_write(pid_t pid, const struct code_edit *e, size_t n, const struct code_guard *g,
	       size_t ng, int timeout_ms, struct code_write_stats *st, size_t *stale);

#endif
