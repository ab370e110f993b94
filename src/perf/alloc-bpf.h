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
 * Needs CAP_BPF with CAP_PERFMON (or root).
 */
#ifndef RECCE_ALLOC_BPF_H
#define RECCE_ALLOC_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/alloc-format.h"

#define ALLOC_BPF_LIVE_MAX 65536 /* sampled allocations still in use that can be matched */

struct alloc_bpf {
	int out_fd; /* BPF_MAP_TYPE_PERF_EVENT_ARRAY, one entry per CPU */
	int left_fd, table_fd, pending_fd, live_fd, tail_fd; /* the program's state */
	int prog_fd;
	int sessions; /* the program runs in uprobe sessions: one link a file */
	int linked;   /* a link was made */
};

/* Makes the maps and loads the program, sampling every interval bytes on
 * average; ncpus entries for the output events; for uprobe sessions unless
 * the kernel has none or no_sessions is set, then for an entry and a
 * return link. On failure a verifier log (if any) is left in log. Returns
 * 0 or -errno (-EINVAL: the kernel has no uprobe_multi links either). */
int alloc_bpf_new(struct alloc_bpf *b, uint64_t interval, size_t ncpus, int no_sessions, char *log,
		  size_t log_len);

/* Puts the output event (a PERF_COUNT_SW_BPF_OUTPUT) of cpu in place. */
int alloc_bpf_set_output(struct alloc_bpf *b, int cpu, int event_fd);

/* Attaches the program to n functions of the file path (offsets, with
 * their alloc_fn_kind and ALLOC_FN_* flags), for process pid: links[0] the
 * session or entry link, links[1] the return link (-1 with sessions).
 * Returns 0 or -errno (-EOPNOTSUPP: the kernel cannot make the links). */
int alloc_bpf_attach(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		     const uint16_t *kinds, size_t n, pid_t pid, int links[2]);

void alloc_bpf_release(struct alloc_bpf *b);

#endif
