/*
 * The continuous profile store over SQLite (see store.h): the schema, a
 * window written in one transaction, retention by age and size, and the
 * reads of a query, every SQL statement of the store in this file.
 */
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCHEMA_VERSION "1"
#define BUSY_MS	       5000 /* a reader waits this long for a checkpoint */

struct store {
	sqlite3 *db;
	int writable;
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS windows("
    " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, host TEXT NOT NULL,"
    " samples INTEGER NOT NULL, lost INTEGER NOT NULL, idle INTEGER NOT NULL,"
    " processes INTEGER NOT NULL, agent_cpu_ns INTEGER NOT NULL,"
    " PRIMARY KEY(host, start_ns));"
    "CREATE TABLE IF NOT EXISTS profiles("
    " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, host TEXT NOT NULL,"
    " pid INTEGER NOT NULL, comm TEXT NOT NULL, exe TEXT NOT NULL,"
    " build_id TEXT NOT NULL, cgroup TEXT NOT NULL,"
    " samples INTEGER NOT NULL, cpu_ns INTEGER NOT NULL, pprof BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS profiles_by_time ON profiles(start_ns);"
    "CREATE TABLE IF NOT EXISTS unsent("
    " dest TEXT NOT NULL, start_ns INTEGER NOT NULL, PRIMARY KEY(dest, start_ns));"
    "INSERT OR IGNORE INTO meta VALUES('schema', '" SCHEMA_VERSION "');";

/* What an SQLite result code means as an errno. */
static int errno_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_PERM:
	case SQLITE_READONLY:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	default:
		return -EIO;
	}
}

static int exec(struct store *s, const char *sql)
{
	return errno_of(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

int store_open(const char *dir, int writable, struct store **out, const char **why)
{
	char path[PATH_MAX];
	struct store *s;
	int err;

	*out = NULL;
	*why = "";
	if ((size_t)snprintf(path, sizeof(path), "%s/" STORE_FILE, dir) >= sizeof(path))
		return -ENAMETOOLONG;
	if (writable && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*why = "cannot make the directory";
		return -errno;
	}
	if (!writable && access(path, F_OK) < 0) {
		*why = "no store there";
		return -errno;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->writable = writable;
	int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READWRITE;
	int rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK && !writable) {
		/* A reader without the right to write still reads. */
		sqlite3_close(s->db);
		rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY, NULL);
	}
	if (rc != SQLITE_OK) {
		err = errno_of(rc);
		*why = "cannot open the database";
		goto fail;
	}
	sqlite3_busy_timeout(s->db, BUSY_MS);
	if (writable) {
		/* WAL: a window is one append to the log; a crash loses at most
		 * the one being written, and readers never block the writer. */
		if ((err = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")) ||
		    (err = exec(s, schema))) {
			*why = sqlite3_errmsg(s->db);
			goto fail;
		}
	} else if ((err = exec(s, "SELECT value FROM meta WHERE key = 'schema'"))) {
		*why = "not a recce store";
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sqlite3_close(s->db);
	free(s);
	return err;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s);
}

const char *store_error(struct store *s)
{
	return sqlite3_errmsg(s->db);
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	return errno_of(sqlite3_prepare_v2(s->db, sql, -1, st, NULL));
}

static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : errno_of(rc) ? errno_of(rc) : -EIO;
}

static int put_window(struct store *s, const struct store_window *w)
{
	sqlite3_stmt *st;
	int err = prepare(s, "INSERT OR REPLACE INTO windows VALUES(?,?,?,?,?,?,?,?)", &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, w->start_ns);
	sqlite3_bind_int64(st, 2, w->end_ns);
	sqlite3_bind_text(st, 3, w->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)w->samples);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)w->lost);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)w->idle);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)w->processes);
	sqlite3_bind_int64(st, 8, w->agent_cpu_ns);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

static int put_profiles(struct store *s, const struct store_profile *p, size_t n)
{
	sqlite3_stmt *st;
	int err = prepare(s, "INSERT INTO profiles VALUES(?,?,?,?,?,?,?,?,?,?,?)", &st);
	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(st, 1, p[i].start_ns);
		sqlite3_bind_int64(st, 2, p[i].end_ns);
		sqlite3_bind_text(st, 3, p[i].host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, p[i].pid);
		sqlite3_bind_text(st, 5, p[i].comm ? p[i].comm : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, p[i].exe ? p[i].exe : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, p[i].build_id ? p[i].build_id : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, p[i].cgroup ? p[i].cgroup : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)p[i].samples);
		sqlite3_bind_int64(st, 10, p[i].cpu_ns);
		sqlite3_bind_blob(st, 11, p[i].pprof, (int)p[i].pprof_len, SQLITE_STATIC);
		err = step_done(st);
	}
	if (st)
		sqlite3_finalize(st);
	return err;
}

/* Marks (or with unmark, unmarks) the window at start_ns as not yet
 * taken by dest. */
static int put_unsent(struct store *s, const char *dest, int64_t start_ns, int unmark)
{
	sqlite3_stmt *st;
	int err = prepare(s,
			  unmark ? "DELETE FROM unsent WHERE dest = ? AND start_ns = ?"
				 : "INSERT OR IGNORE INTO unsent VALUES(?,?)",
			  &st);
	if (err)
		return err;
	sqlite3_bind_text(st, 1, dest, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, start_ns);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

int store_write(struct store *s, const struct store_window *w, const struct store_profile *p,
		size_t n, const char *unsent_to)
{
	int err = exec(s, "BEGIN IMMEDIATE");
	if (err)
		return err;
	if (!(err = put_window(s, w)) && !(err = put_profiles(s, p, n)) &&
	    !(err = unsent_to ? put_unsent(s, unsent_to, w->start_ns, 0) : 0))
		err = exec(s, "COMMIT");
	if (err)
		exec(s, "ROLLBACK");
	return err;
}

static int rows_done(sqlite3_stmt *st, int err, int rc);

int store_sent(struct store *s, const char *dest, int64_t start_ns)
{
	return put_unsent(s, dest, start_ns, 1);
}

int store_unsent(struct store *s, const char *dest, int64_t *starts, size_t max, size_t *total)
{
	sqlite3_stmt *st;
	size_t n = 0;
	int rc,
	    err = prepare(s, "SELECT start_ns FROM unsent WHERE dest = ? ORDER BY start_ns", &st);

	*total = 0;
	if (err)
		return err;
	sqlite3_bind_text(st, 1, dest, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n < max)
			starts[n++] = sqlite3_column_int64(st, 0);
		(*total)++;
	}
	err = rows_done(st, 0, rc);
	return err ? err : (int)n;
}

/* One integer a statement without parameters returns, or -1. */
static int64_t query_int(struct store *s, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (prepare(s, sql, &st))
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int64_t store_bytes(struct store *s)
{
	int64_t pages = query_int(s, "PRAGMA page_count");
	int64_t free_pages = query_int(s, "PRAGMA freelist_count");
	int64_t size = query_int(s, "PRAGMA page_size");

	if (pages < 0 || free_pages < 0 || size < 0)
		return -1;
	return (pages - free_pages) * size;
}

/* Deletes the windows that started before t, with their profiles. */
static int delete_before(struct store *s, int64_t t, size_t *deleted, size_t *unsent)
{
	sqlite3_stmt *st;
	int err = exec(s, "BEGIN IMMEDIATE");
	if (err)
		return err;
	err = prepare(s, "DELETE FROM windows WHERE start_ns < ?", &st);
	if (!err) {
		sqlite3_bind_int64(st, 1, t);
		err = step_done(st);
		*deleted += (size_t)sqlite3_changes(s->db);
		sqlite3_finalize(st);
	}
	if (!err && !(err = prepare(s, "DELETE FROM profiles WHERE start_ns < ?", &st))) {
		sqlite3_bind_int64(st, 1, t);
		err = step_done(st);
		sqlite3_finalize(st);
	}
	if (!err && !(err = prepare(s, "DELETE FROM unsent WHERE start_ns < ?", &st))) {
		sqlite3_bind_int64(st, 1, t);
		err = step_done(st);
		*unsent += (size_t)sqlite3_changes(s->db);
		sqlite3_finalize(st);
	}
	if (!err)
		err = exec(s, "COMMIT");
	if (err)
		exec(s, "ROLLBACK");
	return err;
}

int store_retain(struct store *s, int64_t older_than_ns, uint64_t max_bytes, size_t *deleted,
		 size_t *unsent)
{
	*deleted = *unsent = 0;
	int err = delete_before(s, older_than_ns, deleted, unsent);
	/* Over the cap: the oldest tenth of the time stored goes, until under. */
	for (int rounds = 0; !err && max_bytes && rounds < 64; rounds++) {
		int64_t bytes = store_bytes(s);
		if (bytes < 0 || (uint64_t)bytes <= max_bytes)
			break;
		int64_t first = query_int(s, "SELECT min(start_ns) FROM windows");
		int64_t last = query_int(s, "SELECT max(start_ns) FROM windows");
		if (first < 0 || last <= first)
			break;
		err = delete_before(s, first + (last - first) / 10 + 1, deleted, unsent);
	}
	return err;
}

/* A statement over the rows that overlap [from, to): its first two
 * parameters are bound to to and from. */
static int prepare_range(struct store *s, const char *sql, int64_t from, int64_t to,
			 sqlite3_stmt **st)
{
	int err = prepare(s, sql, st);
	if (!err) {
		sqlite3_bind_int64(*st, 1, to);
		sqlite3_bind_int64(*st, 2, from);
	}
	return err;
}

/* Ends a loop over rows: finalizes st and returns the loop's error, or
 * the step's (rc) when the rows did not run out. */
static int rows_done(sqlite3_stmt *st, int err, int rc)
{
	if (!err && rc != SQLITE_DONE)
		err = errno_of(rc) ? errno_of(rc) : -EIO;
	sqlite3_finalize(st);
	return err;
}

int store_label_known(const char *key)
{
	static const char *const keys[] = {"host", "comm", "exe", "build_id", "cgroup", "pid"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

/* Appends to the SQL text (sql, cap bytes) an IN list of n parameters. */
static void sql_in(char *sql, size_t cap, const char *column, size_t n)
{
	size_t len = strlen(sql);
	len += (size_t)snprintf(sql + len, cap - len, " AND %s IN (", column);
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(sql + len, cap - len, "%s?", i ? "," : "");
	if (len < cap)
		snprintf(sql + len, cap - len, ")");
}

int store_each(struct store *s, const struct store_filter *f,
	       int (*fn)(void *arg, const struct store_profile *p), void *arg)
{
	char sql[8192] = "SELECT start_ns, end_ns, host, pid, comm, exe, build_id, cgroup, samples,"
			 " cpu_ns, pprof FROM profiles WHERE start_ns < ? AND end_ns > ?";
	if (f->npids + f->ncomms + f->nlabels > 500)
		return -E2BIG;
	if (f->npids)
		sql_in(sql, sizeof(sql), "pid", f->npids);
	if (f->ncomms)
		sql_in(sql, sizeof(sql), "comm", f->ncomms);
	if (f->host)
		sql_in(sql, sizeof(sql), "host", 1);
	for (size_t i = 0; i < f->nlabels; i++) {
		if (!store_label_known(f->label_keys[i]))
			return -EINVAL;
		sql_in(sql, sizeof(sql), f->label_keys[i], 1);
	}
	size_t len = strlen(sql);
	snprintf(sql + len, sizeof(sql) - len, " ORDER BY start_ns, pid");

	sqlite3_stmt *st;
	int err = prepare(s, sql, &st);
	if (err)
		return err;
	int at = 1;
	sqlite3_bind_int64(st, at++, f->to_ns);
	sqlite3_bind_int64(st, at++, f->from_ns);
	for (size_t i = 0; i < f->npids; i++)
		sqlite3_bind_int64(st, at++, f->pids[i]);
	for (size_t i = 0; i < f->ncomms; i++)
		sqlite3_bind_text(st, at++, f->comms[i], -1, SQLITE_STATIC);
	if (f->host)
		sqlite3_bind_text(st, at++, f->host, -1, SQLITE_STATIC);
	for (size_t i = 0; i < f->nlabels; i++) {
		if (strcmp(f->label_keys[i], "pid") == 0)
			sqlite3_bind_int64(st, at++, strtoll(f->label_values[i], NULL, 10));
		else
			sqlite3_bind_text(st, at++, f->label_values[i], -1, SQLITE_STATIC);
	}
	int rc = SQLITE_DONE;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_profile p = {
		    .start_ns = sqlite3_column_int64(st, 0),
		    .end_ns = sqlite3_column_int64(st, 1),
		    .host = (const char *)sqlite3_column_text(st, 2),
		    .pid = (pid_t)sqlite3_column_int64(st, 3),
		    .comm = (const char *)sqlite3_column_text(st, 4),
		    .exe = (const char *)sqlite3_column_text(st, 5),
		    .build_id = (const char *)sqlite3_column_text(st, 6),
		    .cgroup = (const char *)sqlite3_column_text(st, 7),
		    .samples = (uint64_t)sqlite3_column_int64(st, 8),
		    .cpu_ns = sqlite3_column_int64(st, 9),
		    .pprof = sqlite3_column_blob(st, 10),
		    .pprof_len = (size_t)sqlite3_column_bytes(st, 10),
		};
		err = fn(arg, &p);
	}
	return rows_done(st, err, rc);
}

int store_windows(struct store *s, int64_t from_ns, int64_t to_ns,
		  int (*fn)(void *arg, const struct store_window *w), void *arg)
{
	sqlite3_stmt *st;
	int err = prepare_range(s,
				"SELECT start_ns, end_ns, host, samples, lost, idle, processes,"
				" agent_cpu_ns FROM windows WHERE start_ns < ? AND end_ns > ?"
				" ORDER BY start_ns",
				from_ns, to_ns, &st);
	if (err)
		return err;
	int rc = SQLITE_DONE;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_window w = {
		    .start_ns = sqlite3_column_int64(st, 0),
		    .end_ns = sqlite3_column_int64(st, 1),
		    .host = (const char *)sqlite3_column_text(st, 2),
		    .samples = (uint64_t)sqlite3_column_int64(st, 3),
		    .lost = (uint64_t)sqlite3_column_int64(st, 4),
		    .idle = (uint64_t)sqlite3_column_int64(st, 5),
		    .processes = (uint64_t)sqlite3_column_int64(st, 6),
		    .agent_cpu_ns = sqlite3_column_int64(st, 7),
		};
		err = fn(arg, &w);
	}
	return rows_done(st, err, rc);
}

int store_series(struct store *s, int64_t from_ns, int64_t to_ns,
		 int (*fn)(void *arg, int64_t start, int64_t end, const char *comm, int64_t cpu_ns),
		 void *arg)
{
	sqlite3_stmt *st;
	int err = prepare_range(s,
				"SELECT start_ns, end_ns, comm, sum(cpu_ns) FROM profiles"
				" WHERE start_ns < ? AND end_ns > ?"
				" GROUP BY start_ns, end_ns, comm ORDER BY start_ns, comm",
				from_ns, to_ns, &st);
	if (err)
		return err;
	int rc = SQLITE_DONE;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = fn(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3));
	return rows_done(st, err, rc);
}
