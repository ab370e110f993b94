/*
 * Per-CPU sampling of chosen processes: a family of processes (a BPF
 * hash of their tgids, joined by every process one of them creates,
 * before it runs) and the program that keeps, of a CPU's cpu-clock
 * samples, only those taken in a thread of the family (bpf/pick.bpf.c).
 *
 * Why: a per-thread cpu-clock event samples its thread once the thread
 * has run a whole period of CPU time, so a program whose work runs in
 * threads shorter than that (a thread per request) is never sampled. An
 * event per CPU samples whatever runs there at a fixed rate, as perf
 * record -a does; the program drops the rest in the kernel, unwritten.
 *
 * Needs CAP_BPF with CAP_PERFMON (or root).
 *
 * Ownership: the struct is the caller's; pick_bpf_release() closes what
 * pick_bpf_new() made.
 */
#ifndef RECCE_PICK_BPF_H
#define RECCE_PICK_BPF_H

#include <stddef.h>
#include <sys/types.h>

/* Processes the family holds at most; a process beyond is not sampled. */
#define PICK_BPF_PROCS 16384

struct pick_bpf {
	int family_fd; /* tgid -> 1; for the Python frame program too */
	int fork_fd;   /* the fork follower's tracepoint */
	int prog_fd;   /* for PERF_EVENT_IOC_SET_BPF */
};

/* Makes the family, follows its forks and loads the program. On failure
 * the verifier's log (if any) is left in log. Returns 0 or -errno. */
int pick_bpf_new(struct pick_bpf *p, char *log, size_t log_len);

/* Makes process pid a member. Returns 0 or -errno. */
int pick_bpf_add(struct pick_bpf *p, pid_t pid);

void pick_bpf_release(struct pick_bpf *p);

#endif
