/*
 * The continuous profile store: one SQLite database (store.db in its
 * directory) that the agent writes a window at a time and any reader
 * opens beside it, the agent running or not.
 *
 * Each window is one transaction: a row in `windows` (its bounds, its
 * host, what the sampler counted) and a row per process sampled in it in
 * `profiles` (its labels and its profile, a gzip-compressed pprof). The
 * database runs in WAL mode: a crash of the writer loses at most the
 * window it was writing, and readers never wait for it. The schema is in
 * docs/recce-agent.md.
 *
 * A full disk makes a write fail with -ENOSPC and changes nothing; the
 * next window tries again.
 *
 * Ownership: store_open() returns a heap object closed with store_close().
 * Strings of a struct store_profile handed to a callback live until the
 * callback returns.
 */
#ifndef RECCE_STORE_H
#define RECCE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STORE_FILE "store.db"

struct store;

/* One window's row. */
struct store_window {
	int64_t start_ns, end_ns; /* CLOCK_REALTIME */
	const char *host;
	uint64_t samples, lost, idle; /* lost: records the kernel could not write */
	uint64_t processes;   /* processes with samples */
	int64_t agent_cpu_ns; /* CPU the agent used during the window */
};

/* One process's profile of one window. */
struct store_profile {
	int64_t start_ns, end_ns;
	const char *host;
	pid_t pid;
	const char *comm, *exe, *build_id, *cgroup;
	uint64_t samples;
	int64_t cpu_ns;
	const void *pprof; /* gzip-compressed */
	size_t pprof_len;
};

/* Opens (with writable: creates) dir's store. Returns 0, or -errno with
 * *why set to what failed (a static string or SQLite's message, valid
 * until the next call): -ENOENT for a reader without a store, -EBADMSG
 * for a file that is not a store, -ENOSPC, -EACCES. */
int store_open(const char *dir, int writable, struct store **out, const char **why);
void store_close(struct store *s);

/* Writes one window and its profiles in one transaction, marked as not
 * yet taken by unsent_to (the fleet store's "HOST:PORT/DB"; NULL: none).
 * Returns 0, -ENOSPC (a full disk: nothing written), or -EIO. */
int store_write(struct store *s, const struct store_window *w, const struct store_profile *p,
		size_t n, const char *unsent_to);

/* The window at start_ns was taken by dest: unmarked. 0 or -errno. */
int store_sent(struct store *s, const char *dest, int64_t start_ns);

/* The starts of the windows dest has not taken, oldest first: up to max
 * in starts, how many there are in *total. Returns how many were put in
 * starts, or -errno. */
int store_unsent(struct store *s, const char *dest, int64_t *starts, size_t max, size_t *total);

/* Deletes the windows (and their profiles) that ended before
 * older_than_ns, then the oldest ones while the data passes max_bytes (0:
 * no cap). *deleted counts the windows deleted, *unsent those of them a
 * destination had not taken (lost to it). Returns 0 or -EIO. */
int store_retain(struct store *s, int64_t older_than_ns, uint64_t max_bytes, size_t *deleted,
		 size_t *unsent);

/* Bytes the data takes (pages in use), and the file's size with its log. */
int64_t store_bytes(struct store *s);

/* Which profiles a query reads. */
struct store_filter {
	int64_t from_ns, to_ns; /* windows that overlap [from, to) */
	const int64_t *pids;
	size_t npids;
	const char *const *comms;
	size_t ncomms;
	const char *host; /* NULL: any */
	/* Labels of the process (host, comm, exe, build_id, cgroup, pid),
	 * each equal to its value; store_label_known() says which exist. */
	const char *const *label_keys, *const *label_values;
	size_t nlabels;
};

/* Whether key is a label a filter can name. */
int store_label_known(const char *key);

/* Calls fn for every profile under f, in time order; a nonzero return of
 * fn stops and is returned. Returns 0, -EIO, or fn's. */
int store_each(struct store *s, const struct store_filter *f,
	       int (*fn)(void *arg, const struct store_profile *p), void *arg);

/* Calls fn for every window that overlaps [from, to), in time order. */
int store_windows(struct store *s, int64_t from_ns, int64_t to_ns,
		  int (*fn)(void *arg, const struct store_window *w), void *arg);

/* Calls fn with the CPU time of each command name in each window that
 * overlaps [from, to), in time order (the page's chart). */
int store_series(struct store *s, int64_t from_ns, int64_t to_ns,
		 int (*fn)(void *arg, int64_t start, int64_t end, const char *comm, int64_t cpu_ns),
		 void *arg);

/* The last error's words (SQLite's), for messages. */
const char *store_error(struct store *s);

#endif
