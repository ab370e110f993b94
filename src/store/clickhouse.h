/*
 * The fleet store on ClickHouse: every host's continuous agent ships each
 * window to one ClickHouse database (`--export clickhouse://HOST:PORT/DB`),
 * and `recce query --clickhouse URL` reads profiles of any hosts, labels
 * and times back, merged into one profile like a query of the local store
 * (store/query.h).
 *
 * recce speaks ClickHouse's HTTP interface (port 8123 by default). Three
 * tables, made when missing (the schema is in docs/fleet-store.md):
 *   stacks   one row per distinct stack, keyed by a 64-bit hash of its
 *            frames (ReplacingMergeTree: a stack sent twice is one);
 *   samples  one row per process, thread and stack of a window: its
 *            labels, the stack's hash, samples and CPU time; partitioned
 *            by day, so retention drops whole days;
 *   windows  one row per host and window: what its sampler counted.
 * A window's stacks are written before its samples, so a reader never
 * meets a sample whose stack is missing. The exporter remembers the
 * hashes it sent (up to a million, then it starts over) and asks the
 * server which of the others it has (another host's, or its own before
 * it started again), so a stack crosses the network about once.
 *
 * Ownership: clickhouse_open() returns a heap object freed with
 * clickhouse_close(). Errors: each call returns 0 or -errno and leaves a
 * message in clickhouse_error() (the server's first line, or what failed).
 */
#ifndef RECCE_STORE_CLICKHOUSE_H
#define RECCE_STORE_CLICKHOUSE_H

#include <stddef.h>

#include "profile/profile.h"
#include "store/query.h"
#include "store/store.h"

#define CLICKHOUSE_DEFAULT_PORT "8123"
#define CLICKHOUSE_DEFAULT_DB	"recce"

struct clickhouse;

/* Reads url, clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB], without
 * connecting. Returns 0, -EINVAL (why says what is wrong) or -ENOMEM. */
int clickhouse_open(const char *url, struct clickhouse **out, const char **why);
void clickhouse_close(struct clickhouse *ch);

/* Sends password (read from a file, say, rather than the URL that
 * every user sees in ps) as the URL's user's, or as "default"'s. 0, or
 * -EINVAL when it is too long. */
int clickhouse_set_password(struct clickhouse *ch, const char *password);

/* Whether the URL carried a password. */
int clickhouse_url_password(const struct clickhouse *ch);

/* "HOST:PORT/DB", for messages. */
const char *clickhouse_where(const struct clickhouse *ch);

/* The last error's words. */
const char *clickhouse_error(const struct clickhouse *ch);

/* Makes the database and its tables when missing. Returns 0 or -errno. */
int clickhouse_create(struct clickhouse *ch);

/* How clickhouse_export() goes. */
enum {
	/* The window may have landed before, whole or in part (an export
	 * that timed out, or whose answer was lost), and is to be there
	 * once: its windows row is written last and each INSERT lands whole
	 * or not at all, so a window whose row is there is left alone, and
	 * one whose samples are there gets its row only. */
	CLICKHOUSE_AGAIN = 1,
};

/* A window to ship: its row, and the samples of each of its n process
 * profiles (sp[i] its labels, p[i] its named stacks; "tid" and "thread"
 * labels of the samples are kept). */
struct clickhouse_window {
	const struct store_window *w;
	const struct store_profile *sp;
	struct profile *const *p;
	size_t n;
};

/* Ships windows ws[0..nw), as flags say, in one INSERT a table: the
 * stacks the server lacks, the samples, the windows' rows. With
 * CLICKHOUSE_AGAIN it first asks, once a table, which of them are there.
 * Makes the tables first when they have not been made by this object
 * yet. Each INSERT lands whole while it holds fewer rows than the
 * server's max_insert_block_size (1,048,576; a window of a host holds a
 * few thousand). Returns 0 or -errno. */
int clickhouse_export(struct clickhouse *ch, const struct clickhouse_window *ws, size_t nw,
		      unsigned flags);

/* For processes forked from this one that export at the same time: a
 * lock they share around the stacks they send, so that one asks the
 * server which stacks it has only once the other's are there. Called
 * once, before the forks. 0 or -errno. */
int clickhouse_share(struct clickhouse *ch);

/* For an export made by another process (a child that exported for
 * this one): the stack hashes the last clickhouse_export() sent there
 * (*n of them, valid until the next export), and what this object
 * learns from them: the tables are made, and the stacks sent. 0 or
 * -ENOMEM. */
const uint64_t *clickhouse_last_sent(const struct clickhouse *ch, size_t *n);
int clickhouse_learn(struct clickhouse *ch, const uint64_t *sent, size_t n);

/*
 * Retention, as ClickHouse 18 has no TTL: with days > 0, an export that
 * ships a window of a day newer than the last it ran for drops the days
 * of the three tables older than days before that window's (their
 * partitions, whole; stacks go with them, as each day's stacks are sent
 * that day). An export runs it at most once a day; a process that
 * exported for this object tells it of the day with
 * clickhouse_retained(). Tables that are not MergeTrees (Distributed
 * ones) are not dropped from, and said so.
 */
void clickhouse_set_retain(struct clickhouse *ch, int days);
void clickhouse_retained(struct clickhouse *ch, const char *day);

/* What the last export did of retention: the day it ran for (NULL: it
 * did not run), the first day it kept in cutoff, the partitions it
 * dropped in *dropped, and why it failed in *why (NULL: it did not). */
const char *clickhouse_retain_news(const struct clickhouse *ch, char cutoff[16], int *dropped,
				   const char **why);

/* Merges the samples under f (host, pids, comms and labels as for the
 * local store) into *out, with the labels of store_query(). Returns 0 or
 * -errno; *out has no sample when nothing matched. */
int clickhouse_query(struct clickhouse *ch, const struct store_filter *f, struct profile **out,
		     struct store_query_stats *st);

/* clickhouse_query() with the samples merged by command and stack, their
 * only label comm: what a page's flamegraph and top table show, asked
 * of a thousand hosts at once. st counts rows of samples as profiles,
 * and no processes. */
int clickhouse_query_comms(struct clickhouse *ch, const struct store_filter *f,
			   struct profile **out, struct store_query_stats *st);

/* The fleet page's chart of the range and host of f: the CPU time of
 * each command (by_host: of each host) in steps of the windows' span
 * (coarser past 720 steps), summed over the hosts (the commands), each
 * step's [start, end) given to window, then each command's (host's) to
 * point, in time order. Returns 0, -errno, or a callback's nonzero
 * return. */
int clickhouse_series(struct clickhouse *ch, const struct store_filter *f, int by_host,
		      int (*window)(void *arg, int64_t start, int64_t end),
		      int (*point)(void *arg, int64_t start, int64_t end, const char *comm,
				   int64_t cpu_ns),
		      void *arg);

/* The hosts with windows in f's range, by name, with how many. */
int clickhouse_hosts(struct clickhouse *ch, const struct store_filter *f,
		     int (*fn)(void *arg, const char *host, int64_t windows), void *arg);

/* The cgroups (systemd units, containers) of the samples under f, the
 * busiest first, CLICKHOUSE_CGROUPS_MAX of them at most, each with its
 * CPU time. */
#define CLICKHOUSE_CGROUPS_MAX 200
int clickhouse_cgroups(struct clickhouse *ch, const struct store_filter *f,
		       int (*fn)(void *arg, const char *cgroup, int64_t cpu_ns), void *arg);

#endif
