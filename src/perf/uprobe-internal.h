/*
 * What the files of the uprobe set share (uprobe.c: making, attaching
 * and removing probes; uprobe-follow.c: following new processes and
 * threads; uprobe-read.c: the records): the set itself and the few
 * functions one calls in another. Not for other layers.
 */
#ifndef RECCE_PERF_UPROBE_INTERNAL_H
#define RECCE_PERF_UPROBE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/perf-ring.h"
#include "perf/uprobe-bpf.h"
#include "perf/uprobe.h"
#include "util/u64map.h"

#define DEFAULT_RING_PAGES 64	 /* 256 KiB per CPU */
#define FAMILY_MAX	   65536 /* processes of a family alive at once */
/* AX BX CX DX SI DI BP SP IP FLAGS (0-9) and R8-R15 (16-23) in the
 * kernel's PERF_REG_X86_* numbering; the sample holds them in this
 * (ascending) order. */
#define REGS_MASK  0xff03ffULL
#define NREGS	   18
#define TID_PROBED 1 /* u64map value of a thread whose probes are open */
#define TID_GONE   2 /* ... of one that exited: its descriptors are closed */

/* A ring's parsed next hit (perf-ring.h's per-ring slot). */
struct uprobe_slot {
	struct uprobe_hit hit;
	uint64_t chain[UPROBE_MAX_CHAIN];
	uint8_t object[UBPF_CAPTURE_MAX], string[UBPF_CAPTURE_MAX];
	uint8_t stack[UPROBE_MAX_STACK];
	uint64_t py[UBPF_PY_FRAMES][4];
};

/* What a probe is, to attach it to every process and thread traced. */
struct uprobe_probe {
	char *path;
	uint64_t offset;
	int retprobe;
	uint64_t capture; /* UBPF_CAPTURE bits of its cookie, or 0 */
	uint64_t ref_ctr; /* file offset of its USDT semaphore, 0: none */
	int py_walk;	  /* its hits read their thread's Python frames: 1 all, 2 the first few */
};

struct uprobe_fd {
	int fd;
	pid_t tid; /* the thread of a probe event or watcher; a link's process */
	int link;  /* a BPF link (closed in parallel by uprobe_set_remove_all()) */
};

struct uprobe_set {
	struct uprobe_set_config cfg;
	/* Link mode (BPF uprobe_multi links, one per file, direction and
	 * process) when the kernel has them, else one perf uprobe event per
	 * probe and thread: with the BPF program on each (bpf, Linux 5.15),
	 * or else per CPU too, into the rings directly. */
	int links;
	int bpf;	     /* the hits are the program's records (links, or on events) */
	int map_fd, prog_fd; /* with bpf */
	int drops_fd;	     /* with bpf: the program's count of hits dropped */
	int copy_fd; /* with bpf and a stack copy: its bytes now (uprobe_set_stack_copy()) */
	int py_layouts_fd;   /* with bpf and cfg.py_frames: CPython layouts by process */
	/* Link mode following forks (uprobe_set_follow_forks()): the
	 * family's process ids, the fork tracepoint that fills them, and
	 * whether the links (for every process, the program filtering) are
	 * made. */
	int family_fd, fork_fd, family_linked;
	int attached;		/* a process is attached */
	const char *error_path; /* the file whose probes failed to attach */
	uint32_t pmu_type;
	int retprobe_bit;
	int *cpus;
	size_t ncpus;
	/* rings[c] is CPU c's hit ring, rings[ncpus + c] its task ring. */
	struct perf_ring *rings;
	struct uprobe_slot *slots; /* one per ring */
	struct uprobe_probe *probes;
	size_t nprobes, probes_cap;
	size_t nevents;	      /* event mode: probe events open, by thread (estimated) */
	size_t events_wanted; /* ... that the last attach needed */
	/* Every probe event and every thread watcher, closed by
	 * uprobe_set_remove_all() (or when their thread exits). */
	struct uprobe_fd *fds;
	size_t nfds, fds_cap;
	int removed;
	struct u64map ids;  /* event id -> probe index << 1 | retprobe */
	struct u64map tids; /* thread -> TID_PROBED or TID_GONE */
	uint64_t sample_type;
	struct uprobe_stats stats;
	int (*fn)(const struct uprobe_hit *hit, void *arg); /* during uprobe_set_read() */
	void *arg;
};

/* uprobe.c: opens probe number probe on thread tid (event mode); whether
 * opening probes for ntids more threads stays within the event budget;
 * attaches the links of every probe to process pid (0: every process). */
int uprobe_open_probe(struct uprobe_set *u, size_t probe, pid_t tid);
int uprobe_attach_process_events(struct uprobe_set *u, pid_t pid, const pid_t *tids, size_t ntids);
int uprobe_within_budget(const struct uprobe_set *u, size_t ntids);
size_t uprobe_events_for(const struct uprobe_set *u, size_t ntids); /* events they take */
int uprobe_attach_links(struct uprobe_set *u, pid_t pid);
uint64_t uprobe_cookie(const struct uprobe_set *u, size_t probe); /* index | what hits carry */

/* uprobe-follow.c: a task record of a new thread or process (pid, its
 * parent's ppid, thread tid), and of a thread that ended; pid joining
 * the family of link mode. */
void uprobe_follow_task(struct uprobe_set *u, pid_t pid, pid_t ppid, pid_t tid);
void uprobe_forget_thread(struct uprobe_set *u, pid_t pid, pid_t tid);
int uprobe_family_attach(struct uprobe_set *u, pid_t pid);

#endif
