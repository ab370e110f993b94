/*
 * Sampling through perf_event_open(2): opening the events of a thread on
 * every online CPU, one ring buffer per CPU, and reading the records of
 * all rings merged in time order. The events are cpu-clock samples (CPU
 * time), context-switch samples (a stack each time a thread leaves a CPU,
 * with PERF_RECORD_SWITCH records of its every switch out and in), or both;
 * or the samples a BPF program sends (allocation sampling).
 *
 * Layout. The kernel refuses to mmap an inherited per-task event with
 * cpu == -1, so every target thread gets one event per online CPU (pid =
 * TID, cpu = N, inherit = 1: threads and processes it creates later are
 * sampled too). Each CPU's ring belongs to a dummy event that recce opens
 * on itself on that CPU; every target event of that CPU is redirected into
 * it with PERF_EVENT_IOC_SET_OUTPUT. The rings therefore outlive any target
 * event, and an event can be closed without losing its ring. With
 * cpu_wide, the cpu-clock samples come from one more event per CPU (pid
 * -1) whose BPF program keeps the targets' samples only, and the
 * threads' cpu-clock events count without sampling.
 *
 * Records. perf_events_read() parses and bounds-checks every record and
 * calls a handler with a struct perf_record whose pointers point into the
 * ring (or into a bounce buffer when the record wraps around the end of the
 * ring): they are valid only during the call. Records of the rings are
 * merged by timestamp (CLOCK_MONOTONIC), so a mapping or an exec seen on
 * one CPU is handled before the samples that follow it on another.
 *
 * Ownership: perf_events_new() returns a heap object freed by
 * perf_events_free(), which closes every event and unmaps the rings.
 */
#ifndef RECCE_PERF_EVENTS_H
#define RECCE_PERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bits of sample_regs_user recce asks for in dwarf mode: AX..SP, IP, R8..R15
 * in the kernel's PERF_REG_X86_* numbering. */
#define PERF_EVENTS_REGS_MASK 0xff01ffULL
/* Largest user stack copy the kernel accepts (a u16 record size bounds it). */
#define PERF_EVENTS_MAX_STACK_BYTES 65528u

/* The events of perf_events_config and perf_record. */
enum {
	PERF_EVENTS_CPU_CLOCK = 1, /* cpu-clock samples at freq; their period is CPU ns */
	PERF_EVENTS_SWITCHES = 2,  /* a sample at every switch out, and SWITCH records */
	/* No samples of the threads' own: their events carry mappings, names
	 * and tasks, and one output event per CPU (perf_events_output_fd())
	 * takes the samples a BPF program sends, with its raw data. */
	PERF_EVENTS_ALLOC = 4,
};

struct perf_events_config {
	unsigned events;      /* PERF_EVENTS_* bits; 0 means cpu-clock */
	unsigned freq;	      /* cpu-clock samples per second of CPU time, >= 1 */
	int dwarf;	      /* copy user registers and stack instead of a user callchain */
	int fp_chain;	      /* dwarf: keep the user callchain (the frame-pointer walk) too */
	uint32_t stack_bytes; /* dwarf: bytes of user stack per sample (multiple of 8) */
	uint16_t max_stack;   /* callchain depth; 0 means the kernel's maximum */
	int enable_on_exec;   /* start disabled; the kernel enables at the target's exec */
	size_t ring_pages;    /* data pages per CPU ring (a power of two); 0 = default */
	/* A BPF perf_event program run at every sample (cpu-clock, switch)
	 * before it is written (PERF_EVENT_IOC_SET_BPF; inherited events run
	 * it too); 0 for none. A kernel that refuses it leaves the events without it,
	 * and perf_events_bpf_refused() says so. */
	int bpf_prog_fd;
	/* cpu-clock samples come from one event per CPU that samples
	 * whatever runs there, opened by perf_events_open_cpus() with a
	 * program that keeps the targets' (pick-bpf.h); the threads'
	 * cpu-clock events only count their CPU time. */
	int cpu_wide;
};

/* A parsed record. Which fields are set depends on type (PERF_RECORD_*). */
struct perf_record {
	uint32_t type;
	uint16_t misc;
	uint64_t time;	/* CLOCK_MONOTONIC ns; 0 if the record has none */
	uint64_t id;	/* id of the event that was opened (inherited events share it) */
	unsigned event; /* the PERF_EVENTS_* event of id, 0 if unknown */
	uint32_t pid, tid;
	union {
		struct {
			uint64_t ip, period;
			uint64_t nr; /* callchain entries, PERF_CONTEXT_* markers included */
			const uint64_t *ips;
			uint64_t abi;	      /* PERF_SAMPLE_REGS_ABI_*; 0 = no registers */
			const uint64_t *regs; /* PERF_EVENTS_REGS_MASK order, when abi != 0 */
			uint64_t stack_size;  /* valid bytes of the user stack copy */
			uint64_t stack_asked; /* bytes the event asked the kernel for */
			const uint8_t *stack; /* starts at the sampled stack pointer */
			const void *raw;      /* PERF_EVENTS_ALLOC: what the program sent */
			uint32_t raw_size;    /* its bytes (the kernel may pad them) */
		} sample;
		struct {
			uint64_t addr, len, pgoff;
			uint32_t prot, flags;
			const char *filename;
			/* The file's build-id as the kernel read it at the
			 * mapping (Linux 5.12), lowercase hex; "" when the
			 * record has none. */
			char build_id[41];
		} mmap;
		struct {
			const char *comm;
			int exec; /* PERF_RECORD_MISC_COMM_EXEC */
		} comm;
		struct {
			uint32_t ppid, ptid; /* FORK and EXIT */
		} task;
		struct {
			uint64_t lost;
		} lost;
		struct {
			int out;     /* PERF_RECORD_SWITCH: left the CPU (else came back) */
			int preempt; /* it left while still runnable */
		} swtch;
	};
};

/* Counters of what the rings delivered. */
struct perf_events_stats {
	uint64_t records;
	uint64_t malformed; /* records skipped because they failed a bounds check */
	uint64_t wraps;	    /* records copied through a bounce buffer */
	uint64_t taken_over; /* records of an event after another took over (grow_stack) */
};

struct perf_events;

/*
 * Opens the per-CPU rings. Returns 0 and *out, or -errno: -EACCES when the
 * kernel refuses perf_event_open altogether (perf_event_paranoid), -EINVAL
 * for a bad configuration.
 */
int perf_events_new(const struct perf_events_config *cfg, struct perf_events **out);
void perf_events_free(struct perf_events *pe);

/*
 * Opens the sampling events of thread tid on every CPU and redirects them
 * into the rings. If kernel sampling is refused (EACCES/EPERM) the events,
 * this one and all later ones, fall back to user-only sampling. Returns the
 * index of the new task (>= 0), or -ESRCH when the thread is gone, -EACCES
 * when perf_event_open is refused even for user-only sampling, -EMFILE,
 * -errno.
 */
int perf_events_open_task(struct perf_events *pe, pid_t tid);

/* The CPU time, in ns, the cpu-clock events of every task opened (open or
 * closed since) counted: the kernel's own count of what the samples stand
 * for. 0 without cpu-clock events. */
uint64_t perf_events_cpu_ns(const struct perf_events *pe);

/* The samples every task's events and the allocation outputs lost so far
 * (their ring full), by the kernel's count of each event (Linux 6.0 and
 * later; 0 before): unlike the records of losses, which the kernel
 * writes only once the ring has room again, it holds losses at the very
 * end of a run too. */
uint64_t perf_events_lost(const struct perf_events *pe);

/* Opens events on every CPU for the tasks of a cgroup (a descriptor of
 * its directory, under a cgroup v2 mount or the v1 perf_event one), as a
 * task of its own. Returns the task index or -errno (-EBADF, -EACCES). */
int perf_events_open_cgroup(struct perf_events *pe, int cgroup_fd);

/* Closes the events of a task (its inherited events in other threads go
 * with them). Records already in the rings keep their id. */
void perf_events_close_task(struct perf_events *pe, int task);

/* The task whose events have this record id, or -1. */
int perf_events_id_task(const struct perf_events *pe, uint64_t id);
size_t perf_events_ntasks(const struct perf_events *pe);

/* cpu_wide: opens the cpu-clock event of every CPU, with prog_fd's
 * program (which returns 0 for a sample not to be written), and starts
 * them. Returns 0 or -errno. */
int perf_events_open_cpus(struct perf_events *pe, int prog_fd);

/* dwarf, cpu_wide or system-wide (one task, of pid -1, cpu-clock
 * first): the per-CPU sampling events opened again with a copy of bytes
 * of user stack (a multiple of 8, more than the copy now, at most
 * PERF_EVENTS_MAX_STACK_BYTES), running prog_fd (cpu_wide; the config's
 * program else). Each new event starts before its old one goes: no
 * moment is missed, and the old one's records of the moments after are
 * dropped as read (stats.taken_over); those before are read as any.
 * 0, or -errno: with the old events kept where none was opened. */
int perf_events_grow_stack(struct perf_events *pe, uint32_t bytes, int prog_fd);

/* With PERF_EVENTS_ALLOC, the output event of the i-th CPU (i < the number
 * of rings) and that CPU's number; -1 without. */
int perf_events_output_fd(const struct perf_events *pe, size_t i, int *cpu);

/* Whether sampling fell back to user space only. */
int perf_events_user_only(const struct perf_events *pe);

/* The BPF program for the events opened from now on (as the config's
 * bpf_prog_fd; 0 for none). */
void perf_events_set_bpf(struct perf_events *pe, int prog_fd);

/* The errno with which the kernel refused the config's BPF program on an
 * event (negative), or 0. */
int perf_events_bpf_refused(const struct perf_events *pe);

/* Fills fds with up to max descriptors to poll(2) for POLLIN, one per
 * ring; returns the number of rings (fds may be NULL when max is 0). */
size_t perf_events_pollfds(const struct perf_events *pe, int *fds, size_t max);

/*
 * Reads the records now in the rings up to time until (CLOCK_MONOTONIC),
 * in time order, calling fn for each; later ones stay for the next read.
 * A reader takes until just before the read: a record from one CPU is then
 * never handled before an older one another CPU's ring was still to show
 * (an allocation's return before its sample, a free before the return
 * that made the block). UINT64_MAX reads all, once nothing more comes.
 * A non-zero return from fn stops the pass early; the record that
 * returned it counts as read. Returns the number of records read or
 * -errno.
 */
int perf_events_read(struct perf_events *pe, uint64_t until,
		     int (*fn)(const struct perf_record *rec, void *arg),
		     void *arg);

const struct perf_events_stats *perf_events_stats(const struct perf_events *pe);

#endif
