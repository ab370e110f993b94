/*
 * Reading another process's memory (process_vm_readv), for every reader
 * of a target's memory: a traced call's arguments, a CPython's frames,
 * the code under a breakpoint. The target's memory is hostile: what is
 * read is copied, bounded by the caller's buffer, and a page that is not
 * mapped ends a read rather than failing the process.
 */
#ifndef RECCE_PROC_MEM_READ_H
#define RECCE_PROC_MEM_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Up to len bytes at addr of pid's memory into buf. Returns the bytes
 * read (fewer than len when a page after the first is not mapped), or
 * -errno: -ESRCH (no process, or pid <= 0), -EFAULT (addr 0, or its first
 * page not readable), -EPERM. */
ssize_t proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* All len bytes at addr, or none: 0, or -errno (-EFAULT when fewer could
 * be read). */
int proc_mem_read_all(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif
