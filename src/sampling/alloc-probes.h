/*
 * Where allocation sampling probes a process: the allocator it actually
 * maps. Every ELF object of the process that defines malloc (glibc, a
 * jemalloc or tcmalloc linked in or preloaded, an executable with its own)
 * gets the allocation program (perf/alloc-bpf.h) on its allocation and
 * free functions: the C ones, jemalloc's *allocx, and the C++ operators
 * when the allocator defines them itself. Where two objects define them,
 * only the one the process calls is ever hit.
 *
 * Ownership: alloc_probes_new() returns a heap object freed by
 * alloc_probes_free(), which removes every probe before it returns.
 */
#ifndef RECCE_ALLOC_PROBES_H
#define RECCE_ALLOC_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/alloc-bpf.h"

struct alloc_probes;
struct perf_events;
struct proc_registry;
struct symbolizer;

/* Loads the program, sampling every interval bytes on average, writing
 * into the output events of pe (opened with PERF_EVENTS_ALLOC), attached
 * the newest way the kernel has, newest at most (alloc-bpf.h). Returns 0,
 * -EOPNOTSUPP (no way to attach it), -EACCES, -errno. */
int alloc_probes_new(uint64_t interval, struct perf_events *pe, enum alloc_bpf_mode newest,
		     struct alloc_probes **out);

/* How the probes are attached: in uprobe sessions (Linux 6.13), or with
 * every allocator call's return probed as well, by uprobe_multi links
 * (6.6) or perf uprobe events (alloc-bpf.h). After the first
 * alloc_probes_attach(), the way that worked. */
enum alloc_bpf_mode alloc_probes_mode(const struct alloc_probes *ap);

/* Probes the allocators process pid maps (as procs knows them). Returns
 * the number of functions probed, -ENOENT when it maps no allocator,
 * -ESRCH when it is gone, -ECANCELED after alloc_probes_detach(), -errno. */
int alloc_probes_attach(struct alloc_probes *ap, struct proc_registry *procs,
			struct symbolizer *sym, pid_t pid);

/* Removes the probes of process pid, which ended (a process the target
 * created while recorded comes and goes). */
void alloc_probes_forget(struct alloc_probes *ap, pid_t pid);

/* Removes every probe (the target runs at full speed when it returns);
 * the objects probed stay known. */
void alloc_probes_detach(struct alloc_probes *ap);

/* Whether addr, in process pid, lies inside a probed function: a call
 * made from there is the allocator calling itself. */
int alloc_probes_inside(const struct alloc_probes *ap, struct proc_registry *procs, pid_t pid,
			uint64_t addr);

/* The objects probed, by path. */
size_t alloc_probes_objects(const struct alloc_probes *ap, const char *const **paths);

void alloc_probes_free(struct alloc_probes *ap);

#endif
