/*
 * The fleet store on ClickHouse (see clickhouse.h): the URL, statements
 * over the HTTP interface, the tables, and a window's rows written in
 * TabSeparated with its stacks hashed and sent once. Reading back is
 * clickhouse-query.c's.
 */
#include "store/clickhouse.h"

#include "store/clickhouse-sql.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/stacks.h"
#include "util/hash.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/http-client.h"
#include "util/proc-lock.h"
#include "util/tcp.h"
#include "util/u64map.h"

#define TIMEOUT_MS 5000
#define REPLY_MAX  ((size_t)1 << 30)
#define SENT_MAX   1000000 /* stack hashes remembered as sent */
#define SCHEME	   "clickhouse://"
#define DAYS_MAX   64 /* days of the windows of one export (a batch of at most 60) */

const char *clickhouse_where(const struct clickhouse *ch)
{
	return ch->where;
}

const char *clickhouse_error(const struct clickhouse *ch)
{
	return ch->error;
}

void clickhouse_close(struct clickhouse *ch)
{
	if (!ch)
		return;
	u64map_release(&ch->sent);
	free(ch->last);
	proc_lock_free(ch->shared);
	free(ch);
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* ch->auth: "&user=U&password=P", percent-encoded (nothing of what is
 * NULL). 0, or -EINVAL when it does not fit. */
static int put_auth(struct clickhouse *ch, const char *user, const char *password)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	if (!fp)
		return -ENOMEM;
	if (user) {
		fputs("&user=", fp);
		http_url_encode(fp, user);
	}
	if (password) {
		fputs("&password=", fp);
		http_url_encode(fp, password);
	}
	fclose(fp);
	int err = n < sizeof(ch->auth) ? 0 : -EINVAL;
	if (!err)
		memcpy(ch->auth, buf, n + 1);
	free(buf);
	return err;
}

/* The URL's "U[:P]". */
static int set_auth(struct clickhouse *ch, const char *userinfo, size_t len)
{
	char *copy = strndup(userinfo, len);

	if (!copy)
		return -ENOMEM;
	char *colon = strchr(copy, ':');
	if (colon)
		*colon++ = '\0';
	snprintf(ch->user, sizeof(ch->user), "%s", copy);
	ch->url_password = colon != NULL;
	int err = put_auth(ch, copy, colon);
	free(copy);
	return err;
}

int clickhouse_set_password(struct clickhouse *ch, const char *password)
{
	return put_auth(ch, ch->user[0] ? ch->user : "default", password);
}

int clickhouse_url_password(const struct clickhouse *ch)
{
	return ch->url_password;
}

int clickhouse_open(const char *url, struct clickhouse **out, const char **why)
{
	*out = NULL;
	*why = "wants clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB]";
	if (strncmp(url, SCHEME, strlen(SCHEME)) != 0)
		return -EINVAL;
	const char *auth = url + strlen(SCHEME);
	const char *slash = strchr(auth, '/');
	const char *at = memchr(auth, '@', slash ? (size_t)(slash - auth) : strlen(auth));
	const char *hostport = at ? at + 1 : auth;
	size_t hplen = slash ? (size_t)(slash - hostport) : strlen(hostport);
	char hp[300];
	if (!hplen || hplen >= sizeof(hp))
		return -EINVAL;
	memcpy(hp, hostport, hplen);
	hp[hplen] = '\0';

	struct clickhouse *ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	u64map_init(&ch->sent);
	snprintf(ch->db, sizeof(ch->db), "%s",
		 slash && slash[1] ? slash + 1 : CLICKHOUSE_DEFAULT_DB);
	int err = tcp_split(hp, 0, NULL, CLICKHOUSE_DEFAULT_PORT, ch->host, sizeof(ch->host),
			    ch->port, sizeof(ch->port));
	if (!err && !ch->host[0])
		err = -EINVAL;
	if (!err && !valid_name(ch->db)) {
		*why = "wants a database name of letters, digits and '_' after the '/'";
		err = -EINVAL;
	}
	if (!err && at)
		err = set_auth(ch, auth, (size_t)(at - auth));
	if (err) {
		clickhouse_close(ch);
		return err;
	}
	snprintf(ch->where, sizeof(ch->where), "%s:%s/%s", ch->host, ch->port, ch->db);
	*why = "";
	*out = ch;
	return 0;
}

int clickhouse_run(struct clickhouse *ch, const char *sql, const char *data, size_t len,
		   struct http_reply *r)
{
	char *target = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&target, &n);

	if (!fp)
		return -ENOMEM;
	fputs("/?", fp);
	if (data) {
		/* Into a Distributed table, the rows reach their shards
		 * before the INSERT returns: a window's stacks are there
		 * before its samples, and its row is there when recce asks
		 * (a table of one server ignores the setting). */
		fputs("insert_distributed_sync=1&query=", fp);
		http_url_encode(fp, sql);
	}
	/* "&user=...": after the query, or the first parameter. */
	fputs(data || !ch->auth[0] ? ch->auth : ch->auth + 1, fp);
	fclose(fp);
	int err = http_post(ch->host, ch->port, target, data ? data : sql, data ? len : strlen(sql),
			    TIMEOUT_MS, REPLY_MAX, r, ch->error, sizeof(ch->error));
	free(target);
	if (!err && r->status != 200) {
		size_t line = strcspn(r->body, "\n");
		snprintf(ch->error, sizeof(ch->error), "ClickHouse answered %d: %.*s", r->status,
			 (int)(line < 400 ? line : 400), r->body);
		http_reply_release(r);
		err = -EIO;
	}
	return err;
}

static int run_quiet(struct clickhouse *ch, const char *sql, const char *data, size_t len)
{
	struct http_reply r;
	int err = clickhouse_run(ch, sql, data, len, &r);

	if (!err)
		http_reply_release(&r);
	return err;
}

void clickhouse_put_sql(FILE *fp, const char *sql, const char *db)
{
	for (const char *at; (at = strstr(sql, "@.")) != NULL; sql = at + 1) {
		fwrite(sql, 1, (size_t)(at - sql), fp);
		fputs(db, fp);
	}
	fputs(sql, fp);
}

/* Whether the stacks table has its days: one an earlier recce made has
 * not, and would take no row of this one. 0, or -EPROTO and why. */
static int stacks_dated(struct clickhouse *ch)
{
	char sql[256];
	struct http_reply r;

	snprintf(sql, sizeof(sql),
		 "SELECT count() FROM system.columns WHERE database = '%s' AND table = 'stacks'"
		 " AND name = 'day' FORMAT TSV",
		 ch->db);
	int err = clickhouse_run(ch, sql, NULL, 0, &r);
	if (err)
		return err;
	if (strncmp(r.body ? r.body : "", "0\n", 2) == 0) {
		snprintf(ch->error, sizeof(ch->error),
			 "%s.stacks is an earlier recce's, without days: rename it (RENAME TABLE "
			 "%s.stacks TO %s.stacks_undated) and the next export makes it anew; "
			 "docs/fleet-store.md says how to keep its stacks",
			 ch->db, ch->db, ch->db);
		err = -EPROTO;
	}
	http_reply_release(&r);
	return err;
}

int clickhouse_create(struct clickhouse *ch)
{
	/* Times are nanoseconds since the epoch; day is the UTC date of
	 * start_ns, the partition key. */
	static const char *const tables[] = {
	    "CREATE TABLE IF NOT EXISTS @.stacks (day Date, stack_hash UInt64,"
	    " functions Array(String), files Array(String), lines Array(UInt32),"
	    " modules Array(String))"
	    " ENGINE = ReplacingMergeTree PARTITION BY day ORDER BY stack_hash",
	    "CREATE TABLE IF NOT EXISTS @.samples (day Date, start_ns Int64, end_ns Int64,"
	    " host String, pid UInt32, comm String, exe String, build_id String, cgroup String,"
	    " tid UInt32, thread String, stack_hash UInt64, samples UInt64, cpu_ns Int64)"
	    " ENGINE = MergeTree PARTITION BY day ORDER BY (host, start_ns, comm, stack_hash)",
	    "CREATE TABLE IF NOT EXISTS @.windows (day Date, start_ns Int64, end_ns Int64,"
	    " host String, samples UInt64, lost UInt64, processes UInt64, agent_cpu_ns Int64)"
	    " ENGINE = MergeTree PARTITION BY day ORDER BY (host, start_ns)",
	};
	char sql[1024];

	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS %s", ch->db);
	int err = run_quiet(ch, sql, NULL, 0);
	for (size_t i = 0; !err && i < sizeof(tables) / sizeof(tables[0]); i++) {
		char *text = NULL;
		size_t n = 0;
		FILE *fp = open_memstream(&text, &n);
		if (!fp)
			return -ENOMEM;
		clickhouse_put_sql(fp, tables[i], ch->db);
		fclose(fp);
		err = run_quiet(ch, text, NULL, 0);
		free(text);
	}
	if (!err)
		err = stacks_dated(ch);
	ch->created = !err;
	return err;
}

/* --- writing rows ------------------------------------------------------ */

/* A TabSeparated field: backslash, tab and line breaks escaped. */
static void put_field(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		default:
			fputc(*s, fp);
		}
	}
}

void clickhouse_put_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("\\'", fp);
		else
			put_field(fp, (char[]){*s, '\0'});
	}
	fputc('\'', fp);
}

void clickhouse_day(int64_t t_ns, char day[16])
{
	time_t t = (time_t)(t_ns / 1000000000);
	struct tm tm;

	if (t < 0 || !gmtime_r(&t, &tm) || !strftime(day, 16, "%Y-%m-%d", &tm))
		snprintf(day, 16, "1970-01-01");
}

static uint64_t stack_hash(const struct stack_entry *e)
{
	uint64_t h = HASH_FNV1A_INIT;

	for (size_t f = 0; f < e->nframes; f++) {
		const struct stack_frame *fr = &e->frames[f];
		h = hash_fnv1a_str(h, fr->name);
		h = hash_fnv1a_value(h, 0);
		h = hash_fnv1a_str(h, fr->file);
		h = hash_fnv1a_value(h, (uint64_t)fr->line);
		h = hash_fnv1a_str(h, fr->module);
		h = hash_fnv1a_value(h, 1);
	}
	return h;
}

/* The frames' names, files, lines and modules, four arrays of one row. */
enum frame_column { COL_NAME, COL_FILE, COL_LINE, COL_MODULE, NCOLS };

/* The stack's row of day: the day, its hash, then the frames' names,
 * files, lines and modules, root first. */
static void put_stack(FILE *fp, const char *day, uint64_t hash, const struct stack_entry *e)
{
	fprintf(fp, "%s\t%llu", day, (unsigned long long)hash);
	for (int col = 0; col < NCOLS; col++) {
		fputs("\t[", fp);
		for (size_t f = 0; f < e->nframes; f++) {
			const struct stack_frame *fr = &e->frames[f];
			fputs(f ? "," : "", fp);
			if (col == COL_LINE)
				fprintf(fp, "%lld",
					(long long)(fr->line > 0 && fr->line <= UINT32_MAX
							? fr->line
							: 0));
			else
				clickhouse_put_quoted(fp, col == COL_NAME   ? fr->name
							  : col == COL_FILE ? fr->file
									    : fr->module);
		}
		fputc(']', fp);
	}
	fputc('\n', fp);
}

/*
 * A stack is sent once a day: each day's partition of stacks holds the
 * stacks that day's samples name, so that a day dropped from all three
 * tables leaves every later sample its stack. What is remembered as sent
 * is the stack of a day: its hash mixed with the day's.
 */
static uint64_t day_key(const char *day, uint64_t hash)
{
	return hash ^ hash_fnv1a_str(HASH_FNV1A_INIT, day);
}

/* Rows of one process's profile: its stacks new that day to stacks_fp
 * (fresh maps their day keys to their hashes), a row per stack and
 * thread to samples_fp. */
static int put_process(struct clickhouse *ch, const char *day, const struct store_profile *sp,
		       const struct profile *p, FILE *stacks_fp, FILE *samples_fp,
		       struct u64map *fresh)
{
	struct stack_set set;

	if (p->nsample_types < 2)
		return 0;
	int err = stacks_from_profile(p, p->default_sample_type, NULL, &set);
	if (err)
		return err;
	for (size_t i = 0; i < set.n && !err; i++) {
		const struct stack_entry *e = &set.entries[i];
		uint64_t h = stack_hash(e), key = day_key(day, h);
		if (!u64map_get(&ch->sent, key, NULL) && !u64map_get(fresh, key, NULL)) {
			err = u64map_put(fresh, key, h);
			put_stack(stacks_fp, day, h, e);
		}
		const struct profile_label *tid = profile_sample_label(e->sample, "tid");
		const struct profile_label *thread = profile_sample_label(e->sample, "thread");
		fprintf(samples_fp, "%s\t%lld\t%lld\t", day, (long long)sp->start_ns,
			(long long)sp->end_ns);
		const char *const str[] = {sp->host, NULL,	   sp->comm,
					   sp->exe,  sp->build_id, sp->cgroup};
		for (size_t k = 0; k < sizeof(str) / sizeof(str[0]); k++) {
			if (str[k])
				put_field(samples_fp, str[k]);
			else
				fprintf(samples_fp, "%d", (int)sp->pid);
			fputc('\t', samples_fp);
		}
		fprintf(samples_fp, "%lld\t", tid && !tid->str ? (long long)tid->num : 0LL);
		put_field(samples_fp, thread && thread->str ? thread->str : "");
		fprintf(samples_fp, "\t%llu\t%lld\t%lld\n", (unsigned long long)h,
			(long long)e->sample->values[0], (long long)e->sample->values[1]);
	}
	stacks_release(&set);
	return err;
}

struct collect {
	struct clickhouse *ch;
	int err;
};

/* A stack the server has now: remembered, and listed as the last
 * export's. */
static void remember(void *ctx, uint64_t key, uint64_t val)
{
	struct collect *c = ctx;
	struct clickhouse *ch = c->ch;

	(void)val;
	if (!c->err)
		c->err = u64map_put(&ch->sent, key, 1);
	if (!c->err && ch->nlast == ch->last_cap) {
		uint64_t *grown =
		    array_reserve(ch->last, &ch->last_cap, ch->nlast + 1, sizeof(*grown));
		if (!grown)
			c->err = -ENOMEM;
		else
			ch->last = grown;
	}
	if (!c->err)
		ch->last[ch->nlast++] = key;
}

const uint64_t *clickhouse_last_sent(const struct clickhouse *ch, size_t *n)
{
	*n = ch->nlast;
	return ch->last;
}

/* Room for n more remembered stacks: past SENT_MAX, it starts over. */
static void sent_room(struct clickhouse *ch, size_t n)
{
	if (u64map_count(&ch->sent) + n > SENT_MAX) {
		u64map_release(&ch->sent);
		u64map_init(&ch->sent);
	}
}

int clickhouse_learn(struct clickhouse *ch, const uint64_t *sent, size_t n)
{
	ch->created = 1;
	sent_room(ch, n);
	for (size_t i = 0; i < n; i++)
		if (u64map_put(&ch->sent, sent[i], 1) < 0)
			return -ENOMEM;
	return 0;
}

/* The rows of a SELECT, each line's tab-separated fields handed to fn
 * (at most 2). 0 or -errno. */
static int each_row(struct clickhouse *ch, const char *sql,
		    int (*fn)(struct clickhouse *ch, char **f, void *arg), void *arg)
{
	struct http_reply r;
	int err = clickhouse_run(ch, sql, NULL, 0, &r);

	if (err)
		return err;
	for (char *line = r.body, *end; line && *line && !err; line = end) {
		end = strchr(line, '\n');
		if (end)
			*end++ = '\0';
		char *f[2] = {line, strchr(line, '\t')};
		if (f[1])
			*f[1]++ = '\0';
		err = fn(ch, f, arg);
	}
	http_reply_release(&r);
	return err;
}

static int insert(struct clickhouse *ch, const char *table, const char *rows, size_t len)
{
	char sql[256];

	if (!len)
		return 0;
	snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT TabSeparated", ch->db, table);
	return run_quiet(ch, sql, rows, len);
}

/* What rows_there looks for, and where it marks what it found. */
struct there {
	const char *host;
	const struct clickhouse_window *ws;
	size_t nw;
	unsigned char *how, bit;
};

static int mark_there(struct clickhouse *ch, char **f, void *arg)
{
	struct there *t = arg;
	char *stop;
	long long start = strtoll(f[0], &stop, 10);

	if (stop == f[0] || *stop || f[1]) {
		snprintf(ch->error, sizeof(ch->error),
			 "ClickHouse answered a window's start with '%.40s'", f[0]);
		return -EIO;
	}
	for (size_t i = 0; i < t->nw; i++)
		if (t->ws[i].w->start_ns == start && strcmp(t->ws[i].w->host, t->host) == 0)
			t->how[i] |= t->bit;
	return 0;
}

/* Of the windows ws[0..nw), those of host whose start table holds a
 * row of: how[i] |= bit. 0, or -errno. */
static int rows_there(struct clickhouse *ch, const char *table, const char *host,
		      const struct clickhouse_window *ws, size_t nw, unsigned char *how,
		      unsigned char bit)
{
	struct there t = {host, ws, nw, how, bit};
	char *sql = NULL;
	size_t len = 0, k = 0;
	FILE *fp = open_memstream(&sql, &len);

	if (!fp)
		return -ENOMEM;
	fprintf(fp, "SELECT DISTINCT start_ns FROM %s.%s WHERE host = ", ch->db, table);
	clickhouse_put_quoted(fp, host);
	fputs(" AND start_ns IN (", fp);
	for (size_t i = 0; i < nw; i++)
		if (strcmp(ws[i].w->host, host) == 0)
			fprintf(fp, "%s%lld", k++ ? "," : "", (long long)ws[i].w->start_ns);
	fputs(") FORMAT TSV", fp);
	fclose(fp);
	int err = each_row(ch, sql, mark_there, &t);
	free(sql);
	return err;
}

enum { ROW_THERE = 1, SAMPLES_THERE = 2 };

/* What of each window the server has already: how[i] of ROW_THERE and
 * SAMPLES_THERE, asked once a table for each host (a batch has one). */
static int windows_there(struct clickhouse *ch, const struct clickhouse_window *ws, size_t nw,
			 unsigned char *how)
{
	int err = 0;

	for (size_t i = 0; i < nw && !err; i++) {
		size_t j = 0;
		while (j < i && strcmp(ws[j].w->host, ws[i].w->host) != 0)
			j++;
		if (j < i)
			continue; /* asked with an earlier window */
		err = rows_there(ch, "windows", ws[i].w->host, ws, nw, how, ROW_THERE);
		if (!err)
			err = rows_there(ch, "samples", ws[i].w->host, ws, nw, how, SAMPLES_THERE);
	}
	return err;
}

int clickhouse_share(struct clickhouse *ch)
{
	if (!ch->shared && !(ch->shared = proc_lock_new()))
		return -errno;
	return 0;
}

#define ASK_MAX 2000 /* hashes in one question: a query is at most 256 KiB */

/* A question to the server, in parts of ASK_MAX hashes: which of them
 * it has on which of the days. */
struct ask {
	struct clickhouse *ch;
	const char *days; /* "toDate('YYYY-MM-DD'),..." */
	FILE *fp;
	char *sql;
	size_t len, n;
	struct u64map *have; /* day keys */
	int err;
};

/* A row of the answer, a day and a stack's hash: the server has it. */
static int has_stack(struct clickhouse *ch, char **f, void *arg)
{
	struct u64map *have = arg;

	(void)ch;
	if (f[1] && u64map_put(have, day_key(f[0], strtoull(f[1], NULL, 10)), 1) < 0)
		return -ENOMEM;
	return 0;
}

static void ask_flush(struct ask *a)
{
	fclose(a->fp);
	a->fp = NULL;
	if (a->n && !a->err)
		a->err = each_row(a->ch, a->sql, has_stack, a->have);
	free(a->sql);
	a->sql = NULL;
	a->n = 0;
}

static void ask_one(void *ctx, uint64_t key, uint64_t hash)
{
	struct ask *a = ctx;

	(void)key;
	if (a->err)
		return;
	if (!a->fp) {
		if (!(a->fp = open_memstream(&a->sql, &a->len))) {
			a->err = -ENOMEM;
			return;
		}
		fprintf(a->fp,
			"SELECT toString(day), stack_hash FROM %s.stacks"
			" WHERE day IN (%s) AND stack_hash IN (",
			a->ch->db, a->days);
	}
	fprintf(a->fp, "%s%llu", a->n ? "," : "", (unsigned long long)hash);
	if (++a->n == ASK_MAX) {
		fputs(") FORMAT TSV", a->fp);
		ask_flush(a);
	}
}

/* Of the stacks in fresh, those the server has already on their days
 * (another process's export sent them) into have. 0 or -errno. */
static int server_has(struct clickhouse *ch, const char *days, const struct u64map *fresh,
		      struct u64map *have)
{
	struct ask a = {.ch = ch, .days = days, .have = have};

	u64map_each(fresh, ask_one, &a);
	if (a.fp) {
		fputs(") FORMAT TSV", a.fp);
		ask_flush(&a);
	}
	return a.err;
}

/* The rows of stacks (one a line, the day and hash first) but those
 * whose day keys are in have. */
static size_t drop_rows(char *stacks, size_t len, const struct u64map *have)
{
	size_t out = 0;

	for (size_t at = 0; at < len;) {
		char *nl = memchr(stacks + at, '\n', len - at);
		size_t row = nl ? (size_t)(nl - (stacks + at)) + 1 : len - at;
		char day[16] = "";
		const char *tab = memchr(stacks + at, '\t', row);
		if (tab && (size_t)(tab - (stacks + at)) < sizeof(day))
			memcpy(day, stacks + at, (size_t)(tab - (stacks + at)));
		uint64_t key = day_key(day, tab ? strtoull(tab + 1, NULL, 10) : 0);
		if (!u64map_get(have, key, NULL)) {
			memmove(stacks + out, stacks + at, row);
			out += row;
		}
		at += row;
	}
	return out;
}

/* The window's new stacks to the server, but those it has: sent by
 * another host, by this one's profiler before it started again, or by
 * an export of this one at the same time (asked and sent under the lock
 * the exports share, so that one waits for the other's). */
static int send_stacks(struct clickhouse *ch, const char *days, char *stacks, size_t len,
		       const struct u64map *fresh)
{
	struct u64map have;
	int err = 0, locked = 0;

	if (!len)
		return 0;
	if (ch->shared && !(err = proc_lock_take(ch->shared)))
		locked = 1;
	u64map_init(&have);
	if (!err)
		err = server_has(ch, days, fresh, &have);
	if (!err)
		err = insert(ch, "stacks", stacks, drop_rows(stacks, len, &have));
	u64map_release(&have);
	if (locked)
		proc_lock_give(ch->shared);
	return err;
}

/* --- retention ---------------------------------------------------------- */

void clickhouse_set_retain(struct clickhouse *ch, int days)
{
	ch->retain_days = days;
}

void clickhouse_retained(struct clickhouse *ch, const char *day)
{
	snprintf(ch->retained, sizeof(ch->retained), "%s", day);
}

const char *clickhouse_retain_news(const struct clickhouse *ch, char cutoff[16], int *dropped,
				   const char **why)
{
	memcpy(cutoff, ch->cutoff, 16);
	*dropped = ch->dropped;
	*why = ch->retain_error[0] ? ch->retain_error : NULL;
	return ch->retained_now[0] ? ch->retained_now : NULL;
}

/* A table that is not a MergeTree (a Distributed one, over shards). */
static int not_merge_tree(struct clickhouse *ch, char **f, void *arg)
{
	snprintf(ch->retain_error, sizeof(ch->retain_error),
		 "%s.%s is a %s table: retention drops days from the tables that hold the rows "
		 "(on each shard: ALTER TABLE ... DROP PARTITION, docs/fleet-store.md)",
		 ch->db, f[0], f[1] ? f[1] : "?");
	(void)arg;
	return -EOPNOTSUPP;
}

/* One day of one table, older than the days kept: dropped. */
static int drop_day(struct clickhouse *ch, char **f, void *arg)
{
	char sql[256];

	(void)arg;
	if (!f[1] || !valid_name(f[0]) || strlen(f[1]) != 10 || strspn(f[1], "0123456789-") != 10) {
		snprintf(ch->retain_error, sizeof(ch->retain_error),
			 "ClickHouse answered a partition with '%.40s'", f[0]);
		return -EIO;
	}
	snprintf(sql, sizeof(sql), "ALTER TABLE %s.%s DROP PARTITION '%s'", ch->db, f[0], f[1]);
	int err = run_quiet(ch, sql, NULL, 0);
	if (err)
		snprintf(ch->retain_error, sizeof(ch->retain_error), "%s", ch->error);
	else
		ch->dropped++;
	return err;
}

/* Drops the days of the three tables older than ch->retain_days before
 * the day of newest_ns (the newest window's start), as ClickHouse 18 has no TTL: every
 * part of a day is in its partition, and a partition dropped goes whole.
 * Once a day: what it did is in clickhouse_retain_news(). */
static void retain(struct clickhouse *ch, int64_t newest_ns)
{
	char *cutoff = ch->cutoff, sql[512];

	ch->dropped = 0;
	ch->retain_error[0] = '\0';
	clickhouse_day(newest_ns, ch->retained_now);
	clickhouse_day(newest_ns - ch->retain_days * DAY_NS, cutoff);
	snprintf(sql, sizeof(sql),
		 "SELECT name, engine FROM system.tables WHERE database = '%s'"
		 " AND name IN ('stacks', 'samples', 'windows') AND engine NOT LIKE '%%MergeTree'"
		 " FORMAT TSV",
		 ch->db);
	int err = each_row(ch, sql, not_merge_tree, NULL);
	snprintf(sql, sizeof(sql),
		 "SELECT DISTINCT table, toString(min_date) FROM system.parts"
		 " WHERE database = '%s' AND table IN ('stacks', 'samples', 'windows') AND active"
		 " AND max_date < toDate('%s') AND min_date = max_date FORMAT TSV",
		 ch->db, cutoff);
	if (!err)
		err = each_row(ch, sql, drop_day, NULL);
	if (err && !ch->retain_error[0])
		snprintf(ch->retain_error, sizeof(ch->retain_error), "%s", ch->error);
}

/* Retention for day, the day of newest_ns, unless a process exporting
 * for this object at the same time ran it for that day or a later one:
 * the day it last ran for is kept beside the processes' lock, as
 * ch->retained learns of it only when that process has ended. */
static void retain_once(struct clickhouse *ch, int64_t newest_ns, const char *day)
{
	char *ran = NULL;
	int locked = ch->shared && proc_lock_take(ch->shared) == 0;

	if (locked)
		ran = proc_lock_note(ch->shared);
	if (!ran || strcmp(day, ran) > 0) {
		retain(ch, newest_ns);
		if (ran)
			snprintf(ran, PROC_LOCK_NOTE, "%s", day);
	}
	if (locked)
		proc_lock_give(ch->shared);
}

/* The window's row of the windows table. */
static void put_window(FILE *fp, const struct store_window *w)
{
	char day[16];

	clickhouse_day(w->start_ns, day);
	fprintf(fp, "%s\t%lld\t%lld\t", day, (long long)w->start_ns, (long long)w->end_ns);
	put_field(fp, w->host);
	fprintf(fp, "\t%llu\t%llu\t%llu\t%lld\n", (unsigned long long)w->samples,
		(unsigned long long)w->lost, (unsigned long long)w->processes,
		(long long)w->agent_cpu_ns);
}

int clickhouse_export(struct clickhouse *ch, const struct clickhouse_window *ws, size_t nw,
		      unsigned flags)
{
	char *stacks = NULL, *samples = NULL, *rows = NULL, day[16];
	char days[DAYS_MAX * 24] = "";
	int64_t newest = INT64_MIN;
	size_t stacks_len = 0, samples_len = 0, rows_len = 0, ndays = 0;
	struct u64map fresh;
	int err = 0;

	ch->retained_now[0] = '\0';
	if (!ch->created && (err = clickhouse_create(ch)))
		return err;
	unsigned char *how = calloc(nw ? nw : 1, 1);
	if (!how)
		return -ENOMEM;
	if (flags & CLICKHOUSE_AGAIN)
		err = windows_there(ch, ws, nw, how);
	u64map_init(&fresh);
	FILE *sfp = open_memstream(&stacks, &stacks_len);
	FILE *pfp = open_memstream(&samples, &samples_len);
	FILE *wfp = open_memstream(&rows, &rows_len);
	if (!err && (!sfp || !pfp || !wfp))
		err = -ENOMEM;
	for (size_t i = 0; i < nw && !err; i++) {
		if (how[i] & ROW_THERE)
			continue; /* it is there */
		clickhouse_day(ws[i].w->start_ns, day);
		if (ws[i].w->start_ns > newest)
			newest = ws[i].w->start_ns;
		if (!strstr(days, day) && ndays < DAYS_MAX)
			snprintf(days + strlen(days), sizeof(days) - strlen(days), "%stoDate('%s')",
				 ndays++ ? "," : "", day);
		for (size_t k = 0; k < ws[i].n && !err && !(how[i] & SAMPLES_THERE); k++)
			err = put_process(ch, day, &ws[i].sp[k], ws[i].p[k], sfp, pfp, &fresh);
		put_window(wfp, ws[i].w);
		if (err)
			snprintf(ch->error, sizeof(ch->error), "%s", strerror(-err));
	}
	if (sfp)
		fclose(sfp);
	if (pfp)
		fclose(pfp);
	if (wfp)
		fclose(wfp);
	/* Stacks first: a sample never names a stack the server lacks; the
	 * windows' rows last: a window whose row is there is whole. */
	if (!err)
		err = send_stacks(ch, days, stacks, stacks_len, &fresh);
	if (!err)
		err = insert(ch, "samples", samples, samples_len);
	if (!err)
		err = insert(ch, "windows", rows, rows_len);
	if (!err) {
		sent_room(ch, u64map_count(&fresh));
		struct collect c = {ch, 0};
		ch->nlast = 0;
		u64map_each(&fresh, remember, &c);
	}
	if (!err && ch->retain_days && newest != INT64_MIN) {
		clickhouse_day(newest, day);
		if (strcmp(day, ch->retained) > 0)
			retain_once(ch, newest, day);
	}
	u64map_release(&fresh);
	free(how);
	free(stacks);
	free(samples);
	free(rows);
	return err;
}
