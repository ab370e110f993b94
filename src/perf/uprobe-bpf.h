/*
 * The BPF side of call tracing (uprobe.c's "link" mode): one small BPF
 * program, written here instruction by instruction, that copies a probe
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

#define UBPF_MAX_CHAIN 40 /* call chain entries a hit carries (the BPF stack is 512 bytes) */

/*
 * The record the program writes, as the raw data of a PERF_RECORD_SAMPLE:
 * 64-bit words, UBPF_NWORDS of them plus UBPF_MAX_CHAIN chain entries when
 * the program was built with a call chain.
 */
enum {
	UBPF_COOKIE,	  /* the link's cookie for the offset hit */
	UBPF_PID_TGID,	  /* tgid << 32 | tid */
	UBPF_TIME,	  /* CLOCK_MONOTONIC ns */
	UBPF_RET_ADDR,	  /* the word at the stack pointer (a call's return address) */
	UBPF_CHAIN_BYTES, /* bytes of chain that follow, 0 without a chain */
	UBPF_IP,	  /* rip */
	UBPF_FLAGS,	  /* rflags */
	UBPF_DROPS,	  /* hits dropped (their ring full) before this one, of all */
	UBPF_GPR,	  /* then the 16 registers, in enum x86_gpr order */
	UBPF_NWORDS = UBPF_GPR + 16,
};

/*
 * A cookie with UBPF_CAPTURE set asks the program to copy, at that offset,
 * the object whose address is in a register plus a displacement (rax and
 * 0: a function returns its in-memory result's address there; rbx and
 * 0x60: a function pointer an indirect call is about to take),
 * UBPF_CAPTURE_SIZE(cookie) bytes of it (1 to 64), and with UBPF_CAPTURE_STRING also up to 64 bytes
 * at the pointer in the object's first word, as many as its second word says (libstdc++'s
 * std::string: data pointer, length). Such a hit carries no call chain:
 * after the registers come UBPF_CAP_WORDS words in the order below, the
 * results of the two reads (0 or -errno) first. The low 32 bits of a
 * cookie are the probe's index.
 */
#define UBPF_CAPTURE		  (1ULL << 63)
#define UBPF_CAPTURE_STRING	  (1ULL << 62)
#define UBPF_CAPTURE_MAX	  64
#define UBPF_CAPTURE_BITS(size)	  ((uint64_t)((size)-1) << 48)
#define UBPF_CAPTURE_SIZE(c)	  ((size_t)(((c) >> 48) & 63) + 1)
#define UBPF_CAPTURE_REG_BITS(r)  ((uint64_t)((r)&15) << 54) /* enum x86_gpr */
#define UBPF_CAPTURE_DISP_BITS(d) ((uint64_t)(uint16_t)(int16_t)(d) << 32)
#define UBPF_COOKIE_INDEX(c)	  ((c)&0xffffffffULL)
enum {
	UBPF_CAP_OBJ_RC,
	UBPF_CAP_STR_RC,
	UBPF_CAP_OBJ,
	UBPF_CAP_STR = UBPF_CAP_OBJ + UBPF_CAPTURE_MAX / 8,
	UBPF_CAP_WORDS = UBPF_CAP_STR + UBPF_CAPTURE_MAX / 8,
};

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

/* Loads the program writing into map_fd and counting its drops in
 * drops_fd; with callchain, records carry the return address and the
 * user call chain; with a family map (family_fd >= 0), only hits of the
 * processes in it are written. On failure, a verifier log (if any) is
 * left in log, of size log_len. */
int ubpf_prog_new(int map_fd, int drops_fd, int family_fd, int callchain, char *log,
		  size_t log_len);

/* Makes every process a member of the family creates (by fork, vfork or
 * clone without CLONE_THREAD) a member before it runs its first
 * instruction: a raw tracepoint on sched_process_fork whose program reads
 * the child's tgid at tgid_offset in its task_struct (btf.h). Returns the
 * tracepoint's descriptor (closing it stops the following) or -errno. */
int ubpf_follow_forks(int family_fd, uint32_t tgid_offset, char *log, size_t log_len);

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
 * (the program filters). */
int ubpf_link_new(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  size_t n, int mode, pid_t pid);

#endif
