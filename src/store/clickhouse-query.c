/*
 * A query of the fleet store (see clickhouse.h): the statements of a
 * filter, their TabSeparated rows parsed (arrays included), and the rows
 * built back into a profile with the labels of a local store's query.
 */
#include "store/clickhouse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/clickhouse-sql.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/http-client.h"
#include "util/u64map.h"

static char unescape(char c)
{
	switch (c) {
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'r':
		return '\r';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case '0':
		return '?';
	default:
		return c;
	}
}

/* A TabSeparated field, unescaped in place. */
static char *field(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++)
		*w++ = *r == '\\' && r[1] ? unescape(*++r) : *r;
	*w = '\0';
	return s;
}

/* An array of ['a','b'] or [1,2], its elements unescaped in place and
 * pointed to from a heap array (*out, *n of them). Returns 0, -EBADMSG or
 * -ENOMEM. */
static int parse_array(char *s, char ***out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (*s++ != '[')
		return -EBADMSG;
	while (*s && *s != ']') {
		char *start = s;
		if (*s == '\'') {
			char *w = start = ++s;
			while (*s && *s != '\'')
				*w++ = *s == '\\' && s[1] ? (s++, unescape(*s++)) : *s++;
			if (*s != '\'')
				return -EBADMSG;
			s++;
			*w = '\0';
		} else {
			while (*s && *s != ',' && *s != ']')
				s++;
		}
		char **grown = array_reserve(*out, &cap, *n + 1, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		*out = grown;
		(*out)[(*n)++] = start;
		char c = *s;
		*s = '\0';
		if (c == ']')
			return 0;
		if (c != ',')
			return -EBADMSG;
		s++;
	}
	return *s == ']' ? 0 : -EBADMSG;
}

/* Splits a row at its tabs into at most max fields; returns how many. */
static size_t split_row(char *row, char **fields, size_t max)
{
	size_t n = 0;

	while (row && n < max)
		fields[n++] = strsep(&row, "\t");
	return n;
}

struct reader {
	struct clickhouse *ch;
	clickhouse_fetch_fn fetch; /* a SELECT's answer */
	void *fetch_arg;
	struct profile *p;
	struct u64map stacks; /* stack hash -> index in locs */
	uint64_t **locs;      /* each stack's location ids, leaf first */
	size_t *nlocs, nstacks, cap_locs, cap_nlocs;
	struct htab modules, locations;
	struct store_query_stats *st;
	struct chart *chart; /* the page's chart, for clickhouse_series() */
	int by_comm;	     /* samples merged by command and stack alone */
};

struct loc_key {
	const struct profile *p;
	uint64_t mapping, function;
	int64_t line;
	const char *module;
};

static int module_eq(const void *ctx, uint64_t val)
{
	const struct loc_key *k = ctx;
	const struct profile_mapping *m = profile_mapping(k->p, val);
	return m && strcmp(m->file, k->module) == 0;
}

static int location_eq(const void *ctx, uint64_t val)
{
	const struct loc_key *k = ctx;
	const struct profile_location *l = profile_location(k->p, val);
	return l && l->mapping_id == k->mapping && l->nlines == 1 &&
	       l->lines[0].function_id == k->function && l->lines[0].line == k->line;
}

/* The location of one frame, made once. Returns its id or 0. */
static uint64_t frame_location(struct reader *r, const char *name, const char *file, int64_t line,
			       const char *module)
{
	struct loc_key k = {r->p, 0, 0, line, module};

	if (module[0]) {
		uint64_t mh = hash_fnv1a_str(HASH_FNV1A_INIT, module);
		struct htab_slot *s = htab_find(&r->modules, mh, module_eq, &k);
		if (s) {
			k.mapping = s->val;
		} else {
			k.mapping = profile_add_mapping(r->p, 0, 0, 0, module, "");
			if (!k.mapping || !htab_add(&r->modules, mh, k.mapping))
				return 0;
		}
	}
	k.function = profile_add_function(r->p, name, name, file, 0);
	if (!k.function)
		return 0;
	uint64_t h = hash_fnv1a_value(
	    hash_fnv1a_value(hash_fnv1a_value(HASH_FNV1A_INIT, k.mapping), k.function),
	    (uint64_t)line);
	struct htab_slot *s = htab_find(&r->locations, h, location_eq, &k);
	if (s)
		return s->val;
	struct profile_line pl = {k.function, line};
	uint64_t id = profile_add_location(r->p, k.mapping, 0, &pl, 1);
	if (id && !htab_add(&r->locations, h, id))
		return 0;
	return id;
}

/* One row of the stacks query: hash, functions, files, lines, modules. */
static int read_stack(struct reader *r, char *row)
{
	char *f[5], **names = NULL, **files = NULL, **lines = NULL, **modules = NULL;
	size_t nn = 0, nf = 0, nl = 0, nm = 0;

	if (split_row(row, f, 5) != 5)
		return -EBADMSG;
	int err = parse_array(f[1], &names, &nn);
	if (!err)
		err = parse_array(f[2], &files, &nf);
	if (!err)
		err = parse_array(f[3], &lines, &nl);
	if (!err)
		err = parse_array(f[4], &modules, &nm);
	if (!err && (nf != nn || nl != nn || nm != nn))
		err = -EBADMSG;
	uint64_t *ids = err ? NULL : calloc(nn ? nn : 1, sizeof(*ids));
	if (!err && !ids)
		err = -ENOMEM;
	/* Root first in the table, leaf first in a profile. */
	for (size_t i = 0; !err && i < nn; i++)
		if (!(ids[nn - 1 - i] = frame_location(r, names[i], files[i],
						       strtoll(lines[i], NULL, 10), modules[i])))
			err = -ENOMEM;
	if (!err) {
		uint64_t **gl = array_reserve(r->locs, &r->cap_locs, r->nstacks + 1, sizeof(*gl));
		if (gl)
			r->locs = gl;
		size_t *gn = array_reserve(r->nlocs, &r->cap_nlocs, r->nstacks + 1, sizeof(*gn));
		if (gn)
			r->nlocs = gn;
		if (!gl || !gn ||
		    u64map_put(&r->stacks, strtoull(f[0], NULL, 10), r->nstacks) < 0) {
			err = -ENOMEM;
		} else {
			r->locs[r->nstacks] = ids;
			r->nlocs[r->nstacks++] = nn;
			ids = NULL;
		}
	}
	free(ids);
	free(names);
	free(files);
	free(lines);
	free(modules);
	return err;
}

/* One row of the samples query: host, pid, comm, exe, build_id,
 * cgroup, tid, thread, stack_hash, samples, cpu_ns. */
static int read_sample(struct reader *r, char *row)
{
	char *f[11];
	uint64_t at;

	if (split_row(row, f, 11) != 11)
		return -EBADMSG;
	if (!u64map_get(&r->stacks, strtoull(f[8], NULL, 10), &at))
		return 0; /* a stack the server lost: its samples are left out */
	struct profile_label l[8];
	size_t nl = 0;
	const char *const keys[] = {"host",	"pid",	  "comm", "exe",
				    "build_id", "cgroup", "tid",  "thread"};
	for (size_t k = 0; k < 8; k++) {
		const char *v = field(f[k]);
		if (r->by_comm && k != 2)
			continue; /* not asked for */
		if (k == 1 || k == 6)
			l[nl++] =
			    (struct profile_label){.key = keys[k], .num = strtoll(v, NULL, 10)};
		else if (v[0])
			l[nl++] = (struct profile_label){.key = keys[k], .str = v};
	}
	int64_t values[2] = {strtoll(f[9], NULL, 10), strtoll(f[10], NULL, 10)};
	return profile_add_sample(r->p, r->locs[at], r->nlocs[at], values, l, nl);
}

/* The WHERE clause of f's days, range and host, over a table of
 * windows or samples. */
static void put_where_time(FILE *fp, const struct store_filter *f)
{
	char from_day[16], to_day[16];

	clickhouse_day(f->from_ns, from_day);
	clickhouse_day(f->to_ns, to_day);
	fprintf(fp, " WHERE day >= '%s' AND start_ns < %lld AND end_ns > %lld", from_day,
		(long long)f->to_ns, (long long)f->from_ns);
	/* The Date type ends in 2106: a later end is no bound on days. */
	if (f->to_ns < 4102444800LL * 1000000000)
		fprintf(fp, " AND day <= '%s'", to_day);
	if (f->host) {
		fputs(" AND host = ", fp);
		clickhouse_put_quoted(fp, f->host);
	}
}

/* The WHERE clause of f over the samples table. */
static void put_where(FILE *fp, const struct store_filter *f)
{
	put_where_time(fp, f);
	for (size_t i = 0; i < f->npids; i++)
		fprintf(fp, "%s%lld%s", i ? ", " : " AND pid IN (", (long long)f->pids[i],
			i + 1 == f->npids ? ")" : "");
	for (size_t i = 0; i < f->ncomms; i++) {
		fputs(i ? ", " : " AND comm IN (", fp);
		clickhouse_put_quoted(fp, f->comms[i]);
		fputs(i + 1 == f->ncomms ? ")" : "", fp);
	}
	/* Keys were checked by store_label_known(): they are column names. */
	for (size_t i = 0; i < f->nlabels; i++) {
		fprintf(fp, " AND toString(%s) = ", f->label_keys[i]);
		clickhouse_put_quoted(fp, f->label_values[i]);
	}
}

/* Runs a SELECT made of head, f's WHERE (of its time and host alone
 * with time_only) and tail; calls fn on each row. */
static int select_where(struct reader *r, const char *head, const struct store_filter *f,
			int time_only, const char *tail, int (*fn)(struct reader *r, char *row))
{
	char *sql = NULL;
	size_t n = 0;
	struct http_reply rep;
	FILE *fp = open_memstream(&sql, &n);

	if (!fp)
		return -ENOMEM;
	clickhouse_put_sql(fp, head, r->ch->db);
	if (time_only)
		put_where_time(fp, f);
	else
		put_where(fp, f);
	fprintf(fp, "%s FORMAT TabSeparated", tail);
	fclose(fp);
	int err = r->fetch(r->fetch_arg, sql, &rep);
	free(sql);
	if (err)
		return err;
	char *rows = rep.body;
	for (char *row; !err && (row = strsep(&rows, "\n")) != NULL;)
		if (row[0])
			err = fn(r, row);
	if (err == -EBADMSG)
		snprintf(r->ch->error, sizeof(r->ch->error),
			 "ClickHouse answered rows recce cannot read: is this a recce database?");
	http_reply_release(&rep);
	return err;
}

static int select_rows(struct reader *r, const char *head, const struct store_filter *f,
		       const char *tail, int (*fn)(struct reader *r, char *row))
{
	return select_where(r, head, f, 0, tail, fn);
}

/* A host's windows of the range: host, count, first start, last end,
 * the time they cover. */
static int read_host_windows(struct reader *r, char *row)
{
	char *f[5];

	if (split_row(row, f, 5) != 5)
		return -EBADMSG;
	store_tally_host(r->st, f[0], strtoull(f[1], NULL, 10), strtoll(f[2], NULL, 10),
			 strtoll(f[3], NULL, 10), strtoll(f[4], NULL, 10));
	return 0;
}

/* The one row of the totals query: process windows, processes, the
 * first start and the last end. */
static int read_totals(struct reader *r, char *row)
{
	char *f[4];

	if (split_row(row, f, 4) != 4)
		return -EBADMSG;
	r->st->profiles = strtoull(f[0], NULL, 10);
	r->st->processes = strtoull(f[1], NULL, 10);
	r->st->first_ns = strtoll(f[2], NULL, 10);
	r->st->last_ns = strtoll(f[3], NULL, 10);
	return 0;
}

/* The server's answer to sql, over HTTP. */
static int fetch_http(void *arg, const char *sql, struct http_reply *rep)
{
	return clickhouse_run(arg, sql, NULL, 0, rep);
}

/* --- the fleet page's chart and hosts ------------------------------------ */

#define CHART_MAX 720 /* points of the chart at most: coarser steps past it */

struct chart {
	int64_t step; /* ns */
	int (*window)(void *arg, int64_t start, int64_t end);
	int (*point)(void *arg, int64_t start, int64_t end, const char *comm, int64_t cpu_ns);
	int (*named)(void *arg, const char *name, int64_t n); /* a host's, a cgroup's */
	void *arg;
};

/* The windows' usual span, in whole seconds (10 s: the agent's default,
 * when the range has no window). */
static int read_step(struct reader *r, char *row)
{
	char *f[1];

	if (split_row(row, f, 1) != 1)
		return -EBADMSG;
	int64_t s = strtoll(f[0], NULL, 10);
	r->chart->step = (s > 0 ? s : 10) * 1000000000LL;
	return 0;
}

static int read_step_window(struct reader *r, char *row)
{
	char *f[1];

	if (split_row(row, f, 1) != 1)
		return -EBADMSG;
	int64_t end = strtoll(f[0], NULL, 10) * r->chart->step;
	return r->chart->window(r->chart->arg, end - r->chart->step, end);
}

static int read_point(struct reader *r, char *row)
{
	char *f[3];

	if (split_row(row, f, 3) != 3)
		return -EBADMSG;
	int64_t end = strtoll(f[0], NULL, 10) * r->chart->step;
	return r->chart->point(r->chart->arg, end - r->chart->step, end, f[1],
			       strtoll(f[2], NULL, 10));
}

/* A row of a name and a count (a host and its windows, a cgroup and its
 * CPU time). */
static int read_named(struct reader *r, char *row)
{
	char *f[2];

	if (split_row(row, f, 2) != 2)
		return -EBADMSG;
	return r->chart->named(r->chart->arg, f[0], strtoll(f[1], NULL, 10));
}

int clickhouse_series(struct clickhouse *ch, const struct store_filter *f, int by_host,
		      int (*window)(void *arg, int64_t start, int64_t end),
		      int (*point)(void *arg, int64_t start, int64_t end, const char *comm,
				   int64_t cpu_ns),
		      void *arg)
{
	struct chart c = {.step = 10000000000LL, .window = window, .point = point, .arg = arg};
	struct reader r = {.ch = ch, .fetch = fetch_http, .fetch_arg = ch, .chart = &c};
	char head[256];

	/* Every host's windows end on the same multiples of their span (and
	 * a moment after, when the window was late): one step of the chart
	 * each. */
	int err = select_where(&r, "SELECT round(median(end_ns - start_ns) / 1e9) FROM @.windows",
			       f, 1, "", read_step);
	if (err)
		return err;
	int64_t span = f->to_ns - f->from_ns;
	if (span / c.step > CHART_MAX)
		c.step *= (span / c.step + CHART_MAX - 1) / CHART_MAX;
	snprintf(head, sizeof(head), "SELECT intDiv(end_ns, %lld) AS step FROM @.windows",
		 (long long)c.step);
	err = select_where(&r, head, f, 1, " GROUP BY step ORDER BY step", read_step_window);
	const char *of = by_host ? "host" : "comm";
	char tail[64];
	snprintf(head, sizeof(head),
		 "SELECT intDiv(end_ns, %lld) AS step, %s, sum(cpu_ns) FROM @.samples",
		 (long long)c.step, of);
	snprintf(tail, sizeof(tail), " GROUP BY step, %s ORDER BY step, %s", of, of);
	if (!err)
		err = select_rows(&r, head, f, tail, read_point);
	return err;
}

int clickhouse_hosts(struct clickhouse *ch, const struct store_filter *f,
		     int (*fn)(void *arg, const char *host, int64_t windows), void *arg)
{
	struct chart c = {.named = fn, .arg = arg};
	struct reader r = {.ch = ch, .fetch = fetch_http, .fetch_arg = ch, .chart = &c};

	return select_where(&r, "SELECT host, count() FROM @.windows", f, 1,
			    " GROUP BY host ORDER BY host", read_named);
}

int clickhouse_cgroups(struct clickhouse *ch, const struct store_filter *f,
		       int (*fn)(void *arg, const char *cgroup, int64_t cpu_ns), void *arg)
{
	struct chart c = {.named = fn, .arg = arg};
	struct reader r = {.ch = ch, .fetch = fetch_http, .fetch_arg = ch, .chart = &c};
	char tail[96];

	snprintf(tail, sizeof(tail), " GROUP BY cgroup ORDER BY sum(cpu_ns) DESC, cgroup LIMIT %d",
		 CLICKHOUSE_CGROUPS_MAX);
	return select_where(&r, "SELECT cgroup, sum(cpu_ns) FROM @.samples", f, 0, tail,
			    read_named);
}

static int query_with(struct clickhouse *ch, clickhouse_fetch_fn fetch, void *arg,
		      const struct store_filter *f, int by_comm, struct profile **out,
		      struct store_query_stats *st);

int clickhouse_query(struct clickhouse *ch, const struct store_filter *f, struct profile **out,
		     struct store_query_stats *st)
{
	return query_with(ch, fetch_http, ch, f, 0, out, st);
}

int clickhouse_query_comms(struct clickhouse *ch, const struct store_filter *f,
			   struct profile **out, struct store_query_stats *st)
{
	return query_with(ch, fetch_http, ch, f, 1, out, st);
}

int clickhouse_query_with(struct clickhouse *ch, clickhouse_fetch_fn fetch, void *arg,
			  const struct store_filter *f, struct profile **out,
			  struct store_query_stats *st)
{
	return query_with(ch, fetch, arg, f, 0, out, st);
}

static int query_with(struct clickhouse *ch, clickhouse_fetch_fn fetch, void *arg,
		      const struct store_filter *f, int by_comm, struct profile **out,
		      struct store_query_stats *st)
{
	static const struct profile_value_type types[] = {{"samples", "count"},
							  {"cpu", "nanoseconds"}};
	struct reader r = {
	    .ch = ch, .fetch = fetch, .fetch_arg = arg, .st = st, .by_comm = by_comm};

	memset(st, 0, sizeof(*st));
	*out = NULL;
	if (!(r.p = profile_new()) || profile_set_sample_types(r.p, types, 2) < 0) {
		profile_free(r.p);
		return -ENOMEM;
	}
	r.p->default_sample_type = 1;
	r.p->period_type.type = profile_intern(r.p, "cpu");
	r.p->period_type.unit = profile_intern(r.p, "nanoseconds");
	u64map_init(&r.stacks);
	htab_init(&r.modules);
	htab_init(&r.locations);
	/* A page counts no processes: whether there are samples is enough,
	 * and costs a thousand hosts' rows far less. */
	int err =
	    select_rows(&r,
			by_comm ? "SELECT count(), 0, min(start_ns), max(end_ns) FROM @.samples"
				: "SELECT uniqExact(host, pid, start_ns), uniqExact(host, pid),"
				  " min(start_ns), max(end_ns) FROM @.samples",
			f, "", read_totals);
	/* GLOBAL: over Distributed tables, the samples' stack hashes are
	 * gathered once and sent to every shard of the stacks (a plain IN
	 * is refused there, Code 288); one server takes it as an IN. */
	if (!err && st->profiles)
		err = select_rows(&r,
				  "SELECT stack_hash, any(functions), any(files), any(lines),"
				  " any(modules) FROM @.stacks WHERE stack_hash GLOBAL IN"
				  " (SELECT stack_hash FROM @.samples",
				  f, ") GROUP BY stack_hash", read_stack);
	if (!err && st->profiles && !by_comm)
		err = select_rows(&r,
				  "SELECT host, pid, comm, exe, build_id, cgroup, tid, thread,"
				  " stack_hash, sum(samples), sum(cpu_ns) FROM @.samples",
				  f,
				  " GROUP BY host, pid, comm, exe, build_id, cgroup, tid, thread,"
				  " stack_hash",
				  read_sample);
	/* The same shape of row, the columns not asked for empty: a range
	 * of a thousand hosts is thousands of rows, not millions. */
	if (!err && st->profiles && by_comm)
		err = select_rows(&r,
				  "SELECT '', 0, comm, '', '', '', 0, '', stack_hash, sum(samples),"
				  " sum(cpu_ns) FROM @.samples",
				  f, " GROUP BY comm, stack_hash", read_sample);
	if (!err && st->profiles)
		err = select_where(&r,
				   "SELECT host, count(), min(start_ns), max(end_ns),"
				   " sum(end_ns - start_ns) FROM @.windows",
				   f, 1, " GROUP BY host ORDER BY host", read_host_windows);
	if (!err && st->profiles) {
		int64_t from = st->first_ns > f->from_ns ? st->first_ns : f->from_ns;
		int64_t to = st->last_ns < f->to_ns ? st->last_ns : f->to_ns;
		r.p->time_nanos = from;
		r.p->duration_nanos = to > from ? to - from : 0;
	}
	for (size_t i = 0; i < r.nstacks; i++)
		free(r.locs[i]);
	free(r.locs);
	free(r.nlocs);
	u64map_release(&r.stacks);
	htab_release(&r.modules);
	htab_release(&r.locations);
	if (err) {
		profile_free(r.p);
		return err;
	}
	*out = r.p;
	return 0;
}
