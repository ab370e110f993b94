/*
 * Reading what the kernel says about tasks and the machine under /proc:
 * per-thread CPU ticks, state, name, start time and context switches
 * (/proc/PID/task/TID/stat and status), and the machine's uptime, load,
 * per-core CPU ticks and memory (/proc/uptime, loadavg, stat, meminfo).
 *
 * The parsers take a buffer and its length and never read past it: they
 * are what the unit tests drive. The readers open each file once per call
 * and read it whole into the reader's buffer, which is allocated once and
 * reused, so reading 500 threads a second allocates nothing.
 *
 * Threads come and go between a listing and a read: a task that vanished
 * reads as -ESRCH, never as half-filled data.
 *
 * A reader that reads the same tasks again and again (top, every second)
 * may keep their stat and status files open (procstat_reader_hold()) and
 * read them again from the start: a read instead of an open, a read and a
 * close. A kept file stays the task's it was opened for: once that task
 * has exited it reads as nothing, and a new task with the same id is
 * opened afresh.
 *
 * Ownership: a procstat_reader is caller-allocated, set up with
 * procstat_reader_init() and freed with procstat_reader_release(); the
 * arrays procstat_list_*() return point into it and are valid until the
 * next listing.
 */
#ifndef RECCE_PROCSTAT_H
#define RECCE_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/tasks.h"
#include "util/u64map.h"

#define PROCSTAT_COMM_LEN  16	   /* the kernel's TASK_COMM_LEN */
#define PROCSTAT_MAX_CPUS  1024	   /* cores beyond this are counted in the total only */
#define PROCSTAT_MAX_TASKS 1000000 /* listings stop here */

struct procstat_task {
	pid_t pid, tid;
	pid_t ppid; /* the parent process */
	char comm[PROCSTAT_COMM_LEN];
	char state;	    /* R, S, D, Z, T, t, X, I... */
	uint64_t utime;	    /* clock ticks in user mode */
	uint64_t stime;	    /* clock ticks in kernel mode */
	uint64_t starttime; /* clock ticks after boot: tells a reused TID apart */
	uint64_t rss_pages; /* of the whole process */
	long num_threads;
	uint64_t vcsw, ivcsw; /* voluntary and involuntary context switches */
	uint64_t read_ns;     /* CLOCK_MONOTONIC when its ticks were read */
};

struct procstat_cpu {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct procstat_system {
	double uptime;	/* seconds */
	double load[3]; /* 1, 5, 15 minutes */
	uint64_t mem_total_kb, mem_available_kb;
	uint64_t swap_total_kb, swap_free_kb;
	struct procstat_cpu total;
	struct procstat_cpu cpu[PROCSTAT_MAX_CPUS];
	size_t ncpus;
	uint64_t ctxt; /* context switches since boot, all CPUs */
};

/* Busy and all ticks of a CPU line. */
uint64_t procstat_cpu_busy(const struct procstat_cpu *c);
uint64_t procstat_cpu_all(const struct procstat_cpu *c);

/* Parsers: return 0 or -EINVAL when the text is not what the kernel writes. */

/* "PID (COMM) S PPID ..." of /proc/PID[/task/TID]/stat. COMM may hold
 * spaces and parentheses; it ends at the last ')'. Sets tid, comm, state,
 * ppid, utime, stime, num_threads, starttime, rss_pages (pid is left
 * alone). */
int procstat_parse_stat(const char *buf, size_t len, struct procstat_task *t);

/* The "Tgid", "voluntary_ctxt_switches" and "nonvoluntary_ctxt_switches"
 * lines of a status file (pid, vcsw, ivcsw); missing lines leave 0. */
int procstat_parse_status(const char *buf, size_t len, struct procstat_task *t);

int procstat_parse_uptime(const char *buf, size_t len, double *uptime);
int procstat_parse_loadavg(const char *buf, size_t len, double load[3]);
int procstat_parse_meminfo(const char *buf, size_t len, struct procstat_system *s);
/* The cpu, cpuN and ctxt lines of /proc/stat. */
int procstat_parse_cpus(const char *buf, size_t len, struct procstat_system *s);

/* A task whose files a reader keeps open (procstat_reader_hold()). */
struct procstat_held {
	pid_t pid, tid;	 /* tid 0: the process's own /proc/PID/stat */
	int fd[2];	 /* stat, status; -1 when not open */
	uint64_t sweeps; /* the reader's sweep count when last read */
};

struct procstat_reader {
	char *buf; /* file contents, reused */
	size_t cap;
	struct proc_ids ids; /* the latest listing, reused */
	const char *root;    /* "/proc"; tests point it elsewhere */
	/* Files kept open: at most held_max descriptors (0: none kept). */
	struct procstat_held *held;
	size_t nheld, held_cap, held_max, held_open;
	struct u64map held_at; /* pid << 32 | tid -> index + 1 into held */
	uint64_t sweeps;
};

/* root NULL means "/proc". Returns 0 or -ENOMEM. */
int procstat_reader_init(struct procstat_reader *r, const char *root);
void procstat_reader_release(struct procstat_reader *r);

/* From now on, keeps the stat and status files of the tasks and processes
 * read open, up to max_fds descriptors (past them, files are opened and
 * closed at each read as before). */
void procstat_reader_hold(struct procstat_reader *r, size_t max_fds);

/* Closes the kept files of the tasks not read since the last sweep (gone,
 * or no longer watched). */
void procstat_reader_sweep(struct procstat_reader *r);

/* Descriptors kept open now. */
size_t procstat_reader_held(const struct procstat_reader *r);

/* Reads a whole file into the reader's buffer (NUL-terminated). Returns
 * its length or -errno. */
ssize_t procstat_read_file(struct procstat_reader *r, const char *path);

/* Whether process pid has exited: gone, or a zombie its parent has not
 * reaped (0 if it runs; the reader is only borrowed for its buffer). Sets
 * *zombie when it is one. */
int procstat_exited(struct procstat_reader *r, pid_t pid, int *zombie);

/* The state letter of thread tid of pid (R, S, D, Z, T, t, X...), read
 * with a reader of its own; 0 when it is gone or cannot be read. */
char procstat_task_state(pid_t pid, pid_t tid);

/* Reads /proc/PID/task/TID/stat and status, and sets t->pid to pid.
 * Returns 0, -ESRCH when the thread is gone, -errno. */
int procstat_read_task(struct procstat_reader *r, pid_t pid, pid_t tid, struct procstat_task *t);

/* Reads /proc/PID/stat: the ticks of the whole process, its exited
 * threads' included, read at one moment (t->read_ns). Returns 0, -ESRCH
 * when it is gone, -errno. */
int procstat_read_process(struct procstat_reader *r, pid_t pid, struct procstat_task *t);

/* Reads uptime, loadavg, stat and meminfo. Returns 0 or -errno. */
int procstat_read_system(struct procstat_reader *r, struct procstat_system *s);

/* The threads of pid, in ascending order: returns the count (the array is
 * *ids) or -ESRCH when the process is gone. */
ssize_t procstat_list_tasks(struct procstat_reader *r, pid_t pid, const pid_t **ids);

/* The time the live threads of pid have run on a CPU and waited on a run
 * queue for one (/proc/PID/task/TID/schedstat), summed: a thread that is
 * runnable but not running is waiting, not idle. Returns 0 or -ESRCH. */
int procstat_read_schedstat(struct procstat_reader *r, pid_t pid, uint64_t *run_ns,
			    uint64_t *wait_ns);

/* Every process, in ascending order: the count or -errno. */
ssize_t procstat_list_pids(struct procstat_reader *r, const pid_t **ids);

/*
 * The live processes descended from any of the npids roots (children,
 * their children, ...), with their name and the CPU ticks of the whole
 * process (/proc/PID/stat), into *out (grown through array.h; *cap its
 * capacity). Returns how many, or -errno.
 */
ssize_t procstat_descendants(struct procstat_reader *r, const pid_t *roots, size_t nroots,
			     struct procstat_task **out, size_t *cap);

/* The process (thread group) thread tid belongs to, from
 * /proc/TID/status; -ESRCH when there is no such thread. */
pid_t proc_tgid_of(pid_t tid);

#endif
