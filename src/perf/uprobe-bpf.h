/*
 * The BPF side of call tracing (uprobe.c's "link" mode): one small BPF
 * program (bpf/hits.bpf.c) that copies a probe
 * hit (its cookie, pid and tid, time, every general-purpose register with
 * rip and rflags, and
 * optionally the return address and user call chain, or the object a
 * function returns in memory) into a perf ring through a
 * BPF_MAP_TYPE_PERF_EVENT_ARRAY, and uprobe_multi links that
 * attach it to many offsets of one file in one process at once.
 *
 * Why links rather than one uprobe perf event per thread and CPU: the
 * kernel removes a probe's breakpoint only when its last consumer goes,
 * and each perf event is a consumer whose removal waits for a grace
 * period under a global lock, so removing P probes on T threads and C
 * CPUs kept the target slowed for P*T*C grace periods (seconds). A link
 * is one consumer per offset for a whole process, and its release takes
 * every breakpoint out first and waits for one grace period after.
 *
 * Needs Linux 6.6 or later (uprobe_multi links) and CAP_BPF with
 * CAP_PERFMON (or root). Every function returns a file descriptor the
 * caller owns, or -errno.
 */
#ifndef RECCE_UPROBE_BPF_H
#define RECCE_UPROBE_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/hit-format.h"

/* A BPF_MAP_TYPE_PERF_EVENT_ARRAY of n entries, one per CPU number. */
int ubpf_map_new(size_t n);

/* Puts the perf event fd (a PERF_COUNT_SW_BPF_OUTPUT event) at index cpu. */
int ubpf_map_set(int map_fd, int cpu, int event_fd);

/* A hash of n process ids (u32 tgid -> u32 1): the family whose hits a
 * program built with it keeps. */
int ubpf_family_new(size_t n);

/* A one-entry array (key 0, a u64): the hits the program could not write
 * because their ring was full. The program adds to it the moment a write
 * fails, and each record carries its value when written (UBPF_DROPS): so
 * a reader knows, before the kernel's own report of the loss comes, that
 * something written after a record may be missing. */
int ubpf_drops_new(void);

/* A one-entry array (key 0, a u32): the bytes of stack the program
 * copies now, bytes to begin with (a multiple of 8, at most
 * UBPF_MAX_STACK); user space makes the copy grow by setting it. */
int ubpf_copy_new(uint32_t bytes);

/* Loads the program writing into map_fd and counting its drops in
 * drops_fd; with callchain, records carry the return address and the
 * user call chain, and with stack_bytes as well (a multiple of 8, at most
 * UBPF_MAX_STACK) that much user stack, or what is mapped of it, or as
 * much as copy_fd says when one is given (ubpf_copy_new()); with a
 * family map (family_fd >= 0), only hits of the processes in it are
 * written. With a map of CPython layouts (py_layouts_fd >= 0, made by
 * ubpf_py_layouts_new()) and callchain, the program built for Python
 * frames is loaded: records carry them (hit-format.h's UBPF_PY_*; Linux
 * 5.17). for_links loads it for uprobe_multi links (ubpf_link_new()),
 * else for perf uprobe events (ubpf_event_link_new()). On failure, a verifier log (if any) is left
 * in log, of size log_len. */
int ubpf_prog_new(int map_fd, int drops_fd, int copy_fd, int family_fd, int callchain,
		  uint32_t stack_bytes, int py_layouts_fd, int for_links, char *log,
		  size_t log_len);

/* A hash of CPython layouts by process (u32 tgid -> struct
 * py_bpf_layout, py-format.h), for the hit program built for Python
 * frames. */
int ubpf_py_layouts_new(void);

/* Makes every process a member of the family creates (by fork, vfork or
 * clone without CLONE_THREAD) a member before it runs its first
 * instruction: a raw tracepoint on sched_process_fork whose program reads
 * the child's tgid in its task_struct, where the kernel's BTF says it
 * is. Returns the
 * tracepoint's descriptor (closing it stops the following) or -errno. */
int ubpf_follow_forks(int family_fd, char *log, size_t log_len);

/* How a link runs its program: at entry, at return, or both (a session:
 * at entry, and at return only where the entry run returned 0; needs
 * Linux 6.13 and a program loaded for sessions). */
enum { UBPF_LINK_ENTRY, UBPF_LINK_RETURN, UBPF_LINK_SESSION };

/* The attach types programs are loaded for (enum bpf_attach_type). */
#define UBPF_ATTACH_MULTI   48 /* BPF_TRACE_UPROBE_MULTI (6.6) */
#define UBPF_ATTACH_SESSION 57 /* BPF_TRACE_UPROBE_SESSION (6.13) */

/* Attaches prog at the n offsets of path (cookie i for offset i), in the
 * UBPF_LINK_* mode, for process pid only (its threads, present and
 * future), or with pid 0 in every process that maps path, now or later
 * (the program filters). ref_ctr_offsets (NULL: none) gives each offset
 * the file offset of a USDT semaphore the kernel raises while it is in
 * (0: none). */
int ubpf_link_new(int prog_fd, const char *path, const uint64_t *offsets,
		  const uint64_t *ref_ctr_offsets, const uint64_t *cookies, size_t n, int mode,
		  pid_t pid);

/* Attaches prog, loaded without for_links, to the perf uprobe event
 * event_fd with cookie (Linux 5.15): the program runs at each of its hits
 * in place of the event's own sample. Returns the link's descriptor or
 * -errno. */
int ubpf_event_link_new(int prog_fd, int event_fd, uint64_t cookie);

/* Opens a perf uprobe event at offset of path (a uretprobe with
 * retprobe) for every thread of process pid, and links prog to it as
 * ubpf_event_link_new() does: fds[0] the event, fds[1] the link, both
 * the caller's. Returns 0 or -errno (-ENOENT: no uprobe PMU). */
int ubpf_event_probe(int prog_fd, const char *path, uint64_t offset, int retprobe, pid_t pid,
		     uint64_t cookie, int fds[2]);

#endif
