/*
 * The BPF side of allocation sampling (`record --event alloc`): one
 * program on the entry and return of a process's allocator functions
 * (uprobe session links), which picks about one allocation per interval
 * bytes and says so, with the allocation's size, through a perf event per
 * CPU; perf adds the user stack. Unsampled calls cost one uprobe and no
 * return probe; a sampled call's return gives its address, and a later
 * free of a sampled address is reported too, so that what is still in use
 * at the end is known. An allocator call made inside a sampled one (glibc's
 * realloc(NULL, n) calls malloc) is not sampled again; one made inside an
 * unsampled one is, and its caller, in the record, tells user space.
 *
 * Sampling is a Poisson process over allocated bytes, as in Go and
 * tcmalloc: each CPU counts down a random number of bytes, drawn from an
 * exponential distribution of mean interval (a table user space fills),
 * and the allocation that crosses zero is sampled. An allocation of size s
 * is sampled with probability 1 - exp(-s / interval), and stands for 1/p
 * allocations and s/p bytes.
 *
 * Uprobe sessions need Linux 6.13. From Linux 6.6 (uprobe_multi links) the
 * program runs instead from two links, on every entry and on every return:
 * the same samples, at the cost of a return probe on every allocator call.
 * From Linux 5.15 it runs from perf uprobe events, one at each entry and
 * one at each return of an allocation function, each linked to the
 * program with the function's cookie (a link per probe and process, as
 * trace's perf uprobe events): the same samples, at a little more cost
 * per call (on make bench's workload 17% more than sessions, links 7%).
 * Needs CAP_BPF with CAP_PERFMON (or root).
 */
#ifndef RECCE_ALLOC_BPF_H
#define RECCE_ALLOC_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/alloc-format.h"

#define ALLOC_BPF_LIVE_MAX  65536 /* sampled allocations still in use that can be matched */
#define ALLOC_BPF_PROCS_MAX 16384 /* processes sampled at once */

/* How the program is attached, newest kernel interface last. */
enum alloc_bpf_mode {
	ALLOC_BPF_EVENTS,   /* perf uprobe events at entries and returns (5.15) */
	ALLOC_BPF_LINKS,    /* an entry and a return uprobe_multi link a file (6.6) */
	ALLOC_BPF_SESSIONS, /* one uprobe session link a file (6.13) */
};

/* The most descriptors alloc_bpf_attach() makes for n functions. */
#define ALLOC_BPF_FDS(n) (4 * (n))

struct alloc_bpf {
	int out_fd; /* BPF_MAP_TYPE_PERF_EVENT_ARRAY, one entry per CPU */
	int left_fd, table_fd, pending_fd, live_fd, tail_fd, armed_fd; /* the program's state */
	int prog_fd;
	enum alloc_bpf_mode mode;
	int linked; /* a link was made */
};

/* Makes the maps and loads the program, sampling every interval bytes on
 * average; ncpus entries for the output events; for the newest mode the
 * kernel has, newest at most. On failure a verifier log (if any) is left
 * in log. Returns 0 or -errno (-EINVAL: the kernel can load it for no
 * mode). */
int alloc_bpf_new(struct alloc_bpf *b, uint64_t interval, size_t ncpus, enum alloc_bpf_mode newest,
		  char *log, size_t log_len);

/* Puts the output event (a PERF_COUNT_SW_BPF_OUTPUT) of cpu in place. */
int alloc_bpf_set_output(struct alloc_bpf *b, int cpu, int event_fd);

/* Attaches the program to n functions of the file path (offsets, with
 * their alloc_fn_kind and ALLOC_FN_* flags), for process pid: the links
 * (and perf events) it makes go in fds, at most ALLOC_BPF_FDS(n), to be
 * closed in their order. Returns how many, or -errno (-EOPNOTSUPP: the
 * kernel cannot attach it). */
int alloc_bpf_attach(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		     const uint16_t *kinds, size_t n, pid_t pid, int *fds);

/* Starts (armed) or stops sampling process pid: once every function of
 * it is probed, so that none is sampled alone while the others are put
 * in. Returns 0 or -errno (-ENOSPC: ALLOC_BPF_PROCS_MAX are sampled). */
int alloc_bpf_arm(struct alloc_bpf *b, pid_t pid, int armed);

void alloc_bpf_release(struct alloc_bpf *b);

#endif
