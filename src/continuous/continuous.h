/*
 * The continuous profiler behind `recce agent --continuous`: samples
 * every process of the machine at a low rate (sampling/sampler.h,
 * system-wide, frame pointers), and at the end of every window names each
 * process's stacks into a profile of its own, labelled with its host,
 * pid, command name, program, build-id and cgroup, and writes the window
 * to the store (store/store.h) in one transaction. Then the window's
 * stacks are dropped and the processes that exited forgotten, so memory
 * follows the machine, not the time the agent has run.
 *
 * A full disk stops the writing, not the sampling: each window tries
 * again, and the agent keeps serving. Old windows go by age and by the
 * store's size after each write.
 *
 * With an export URL, every window also goes to a ClickHouse fleet
 * store (store/clickhouse.h). A window it does not take is counted and
 * kept in the local store, marked, and sent again, oldest first, once
 * windows go through (continuous/backlog.h); the agent says so once, and
 * again when windows go through.
 *
 * Ownership: continuous_run() owns everything it makes; the caller owns
 * the config.
 */
#ifndef RECCE_CONTINUOUS_H
#define RECCE_CONTINUOUS_H

#include <stdint.h>
#include <stdio.h>

struct continuous;

/* What happened to the store, for the agent's messages. */
enum continuous_event {
	CONTINUOUS_STARTED,		 /* sampling: the first window is under way */
	CONTINUOUS_STORE_FULL,		 /* a window could not be written: the disk is full */
	CONTINUOUS_STORE_BACK,		 /* windows are written again */
	CONTINUOUS_STORE_FAILED,	 /* a window could not be written: err, why */
	CONTINUOUS_USER_ONLY,		 /* the kernel refuses kernel-mode sampling */
	CONTINUOUS_EXPORT_FAILED,	 /* a window could not be exported: err, why */
	CONTINUOUS_EXPORT_BACK,		 /* windows are exported again; err: how many it missed */
	CONTINUOUS_EXPORT_RETAINED,	 /* its days before why dropped: err partitions */
	CONTINUOUS_EXPORT_RETAIN_FAILED, /* they could not be: why */
	CONTINUOUS_COPY_GREW,		 /* the stack copy grew: err bytes now */
};

/* The most the agent's stack copy grows to: each CPU's ring holds 2 MiB,
 * 128 samples of 16 KiB (an agent whose copy grew to 64 KiB, busy with a
 * window on a loaded machine, lost records, the names of mappings among
 * them). A backend of Debian's postgres under pgbench needs 16 KiB. */
#define CONTINUOUS_COPY_MAX 16384

struct continuous_config {
	const char *store_dir;
	const char *cache_dir; /* symbol tables kept (symbols/sym-cache.h); NULL: none */
	uint64_t cache_max;    /* the cache's cap in bytes; 0: its default */
	int64_t window_ns;     /* 10 s by default */
	unsigned freq;	       /* samples per second per CPU; 19 by default */
	/* How stacks are walked (sampling/sampler.h): the copied stack
	 * unwound (dwarf), then frame pointers (fp_after); or with neither,
	 * frame pointers alone. */
	int dwarf, fp_after;
	uint32_t stack_bytes;
	int copy_grows;		/* ... and grows, up to CONTINUOUS_COPY_MAX (perf/stack-copy.h) */
	int64_t retain_ns;	/* windows older than this go; 0: kept */
	uint64_t max_bytes;	/* the store's cap; 0: none */
	const char *host;	/* the host label; NULL: gethostname() */
	const char *export_url; /* clickhouse://... (store/clickhouse.h), or NULL */
	const char *export_password; /* its password, kept out of the URL; or NULL */
	size_t export_batch;	     /* windows a process sends: 1 (0 too) to EXPORT_BATCH_MAX */
	int export_retain_days;	     /* the fleet store's days kept before today's; 0: all */
	int stop_fd;		/* stop when readable (a signalfd) */
	int http_fd;		/* a listening socket for the page and /metrics; -1: none */
	/* With these, a connection accepted on http_fd goes through
	 * http_tls (its TLS handshake: the plain socket to answer on, or -1),
	 * http_tls_done lets what it relays leave before the connection's
	 * process does, and each request must carry http_token. */
	int (*http_tls)(void *arg, int fd);
	void (*http_tls_done)(void *arg);
	void *http_tls_arg;
	const char *http_token;
	void (*say)(void *arg, enum continuous_event ev, int err, const char *why);
	void *say_arg;
	unsigned restarts; /* how often the agent started the profiler again */
};

/* What the agent did so far, for /metrics. */
struct continuous_stats {
	uint64_t windows;	 /* windows written */
	uint64_t windows_failed; /* windows the store refused */
	uint64_t profiles;	 /* process profiles written */
	uint64_t samples, lost; /* lost: records the kernel could not write */
	uint64_t retained; /* windows deleted by retention */
	int64_t store_bytes;
	int store_full;
	uint64_t exported;	 /* windows shipped to the fleet store */
	uint64_t export_failed;	 /* exports it did not take */
	uint64_t export_pending; /* windows it has not taken yet */
	uint64_t resent;	 /* windows it took when sent again */
	uint64_t export_dropped; /* windows retention deleted before it took them */
	uint64_t export_days_dropped; /* partitions the fleet store's retention dropped */
	double cpu_seconds;	 /* the agent's own CPU time */
	uint64_t restarts;	 /* the profiler started again after it died */
	uint64_t files_open;	 /* binaries the symbolizer holds open */
	uint64_t files_closed;	 /* closed when no process mapped them any more */
	uint64_t resident_bytes; /* the profiler's memory in RAM, after the last window */
	/* Samples of CPython processes: with their Python frames read; of
	 * them, shown with native frames only (the frames did not fit the
	 * native stack); and those whose Python frames were not read. */
	uint64_t python_samples, python_unplaced, python_unread;
	/* The stack copy (dwarf) as it is now, and the stacks that ended
	 * where it did. */
	uint32_t copy_bytes;
	uint64_t copy_ended;
	int64_t started_ns;
};

/* Samples and writes windows until stop_fd is readable; the last,
 * shorter window is written too. Returns 0, or -errno when sampling could
 * not start (-EACCES: perf_event_open refused) or the store could not be
 * opened (*why says which step). */
int continuous_run(const struct continuous_config *cfg, const char **why);

/* Writes the agent's health in Prometheus's text format. */
void continuous_metrics(FILE *fp, const struct continuous_stats *st);

#endif
