/*
 * The BPF side of Python frames in samples: one program, run at every
 * sample (cpu-clock, or a switch off the CPU) of the sampled threads
 * (PERF_EVENT_IOC_SET_BPF on their events), that reads the Python frames
 * of a thread of a process named here as a CPython (its layout,
 * py-format.h) at the moment of the sample, without stopping it, and
 * writes them to a ring with the time. perf writes the sample itself in
 * the same interrupt, so a record and its sample are microseconds apart
 * (the record after, on this kernel).
 *
 * Needs CAP_BPF with CAP_PERFMON (or root), and Linux 5.8 or later (a BPF
 * ring buffer).
 *
 * Ownership: the struct is the caller's; py_bpf_release() closes what
 * py_bpf_new() made.
 */
#ifndef RECCE_PY_BPF_H
#define RECCE_PY_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/py-format.h"

struct ring_buffer;

/* Called with each record read; size is its bytes (its frames end there). */
typedef void (*py_bpf_fn)(const struct py_bpf_record *rec, size_t size, void *arg);

struct py_bpf {
	int prog_fd; /* for PERF_EVENT_IOC_SET_BPF */
	int layouts_fd, tstates_fd, scratch_fd, drops_fd, out_fd;
	struct ring_buffer *ring;
	py_bpf_fn fn;
	void *arg;
};

/* Makes the maps and loads the program; fn(arg) takes the records
 * py_bpf_read() reads. With a family map (family_fd >= 0, pick-bpf.h)
 * the program writes only the samples of the processes in it. On failure
 * the verifier's log (if any) is left in log. Returns 0 or -errno. */
int py_bpf_new(struct py_bpf *b, py_bpf_fn fn, void *arg, int family_fd, char *log, size_t log_len);

/* Names process pid as a CPython of layout L (or, with L NULL, no longer). */
int py_bpf_set_process(struct py_bpf *b, pid_t pid, const struct py_bpf_layout *L);

/* Hands every record written until now to fn. Returns the number read or -errno. */
int py_bpf_read(struct py_bpf *b);

/* Records the ring had no room for, since the start. */
uint64_t py_bpf_dropped(const struct py_bpf *b);

void py_bpf_release(struct py_bpf *b);

#endif
