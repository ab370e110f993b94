/*
 * recce query: the continuous store's windows of a time range (and of
 * some processes) merged into one profile (store/query.h), shown as
 * `recce report` shows a file or written for any tool; --diff compares
 * two ranges. The page docs/recce-query.md is its --help.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/builtin.h"
#include "cli/cmd-query.h"
#include "cli/dirs.h"
#include "cli/fleet-open.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "profile/pprof.h"
#include "profile/view.h"
#include "store/clickhouse.h"
#include "store/query.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/when.h"
#include "writers/render.h"

static void local_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "@%lld", (long long)t);
}

static void range_of(const char *from_s, const char *to_s, const char *from_opt, const char *to_opt,
		     int64_t now, struct store_filter *f)
{
	if (when_time(from_s ? from_s : "-1h", now, now, &f->from_ns) < 0)
		usage_die("query",
			  "%s wants a time: now, -1h, @EPOCH, '2026-11-24 14:00' or 14:00, not "
			  "'%s'",
			  from_opt, from_s);
	if (when_time(to_s ? to_s : "now", now, f->from_ns, &f->to_ns) < 0)
		usage_die("query",
			  "%s wants a time: now, -1h, @EPOCH, '2026-11-24 14:05' or 14:05, not "
			  "'%s'",
			  to_opt, to_s);
	if (f->to_ns <= f->from_ns)
		usage_die("query", "%s must come after %s", to_opt, from_opt);
}

/* A span in words: "1.4 s", "12 min", "3.5 h". */
static void span_words(int64_t ns, char *buf, size_t len)
{
	double s = (double)ns / 1e9;

	if (s < 120)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}

/* What list_windows() remembers from one window to the next. */
struct window_list {
	const struct query_args *a;
	int64_t last_end; /* 0 before the first */
	char last_host[256];
};

static int print_window(void *arg, const struct store_window *w)
{
	struct window_list *l = arg;
	const struct query_args *a = l->a;
	char from[64], to[64];

	if (a->json) {
		printf("{\"start_ns\":%lld,\"end_ns\":%lld,\"host\":\"%s\",\"samples\":%llu,"
		       "\"processes\":%llu,\"lost\":%llu,\"agent_cpu_ns\":%lld}\n",
		       (long long)w->start_ns, (long long)w->end_ns, w->host,
		       (unsigned long long)w->samples, (unsigned long long)w->processes,
		       (unsigned long long)w->lost, (long long)w->agent_cpu_ns);
		return 0;
	}
	/* Time no window covers: the agent or its profiler was down. */
	if (l->last_end && strcmp(l->last_host, w->host) == 0 &&
	    w->start_ns - l->last_end >= 1000000) {
		char gap[32];
		span_words(w->start_ns - l->last_end, gap, sizeof(gap));
		printf("  (%s that no window covers)\n", gap);
	}
	l->last_end = w->end_ns;
	snprintf(l->last_host, sizeof(l->last_host), "%s", w->host);
	local_time(w->start_ns, from, sizeof(from));
	local_time(w->end_ns, to, sizeof(to));
	printf("%-19s  %-19s  %-16s %8llu %9llu %6llu %9.1fms\n", from, to, w->host,
	       (unsigned long long)w->samples, (unsigned long long)w->processes,
	       (unsigned long long)w->lost, (double)w->agent_cpu_ns / 1e6);
	return 0;
}

/* recce query --windows: what the store holds in the range. */
static int list_windows(const struct query_args *a, struct store *s, const struct store_filter *f)
{
	if (!a->json)
		printf("%-19s  %-19s  %-16s %8s %9s %6s %11s\n", "start", "end", "host", "samples",
		       "processes", "lost", "agent-cpu");
	struct window_list l = {.a = a};
	int err = store_windows(s, f->from_ns, f->to_ns, print_window, &l);
	if (err)
		return error("cannot read the store: %s (%s)", strerror(-err), store_error(s)),
		       RECCE_EXIT_ERROR;
	return 0;
}

/* Where a query reads: a local store, or the fleet store on ClickHouse. */
struct source {
	struct store *store;
	struct clickhouse *fleet;
	const char *name; /* the directory, or HOST:PORT/DB */
};

/* The merged profile of f's range, or NULL when it has no sample (said). */
static struct profile *query_range(const struct source *src, const struct store_filter *f)
{
	struct store_query_stats st;
	struct profile *p;
	char from[64], to[64];
	const char *dir = src->name;

	local_time(f->from_ns, from, sizeof(from));
	local_time(f->to_ns, to, sizeof(to));
	if (src->fleet) {
		int err = clickhouse_query(src->fleet, f, &p, &st);
		if (err == -ECONNREFUSED || err == -ETIMEDOUT)
			die("cannot query ClickHouse at %s: %s: is its HTTP interface there "
			    "(port " CLICKHOUSE_DEFAULT_PORT " unless told)?",
			    dir, clickhouse_error(src->fleet));
		if (err)
			die("cannot query ClickHouse at %s: %s", dir,
			    clickhouse_error(src->fleet)[0] ? clickhouse_error(src->fleet)
							    : strerror(-err));
	} else {
		int err = store_query(src->store, f, &p, &st);
		if (err)
			die("cannot read the store in %s: %s (%s)", dir, strerror(-err),
			    store_error(src->store));
	}
	if (st.corrupt)
		warning("%zu stored profiles did not decode and are left out", st.corrupt);
	if (!st.profiles) {
		error("no samples in %s between %s and %s%s: widen --from and --to, or check the "
		      "filters",
		      dir, from, to,
		      f->npids || f->ncomms || f->nlabels || f->host ? " that match" : "");
		profile_free(p);
		return NULL;
	}
	char line[512];
	snprintf(line, sizeof(line), "query: %s to %s", from, to);
	profile_add_comment(p, line);
	snprintf(line, sizeof(line), "processes: %zu (%zu process windows)", st.processes,
		 st.profiles);
	profile_add_comment(p, line);
	if (st.missing_ns) {
		char gap[32];
		span_words(st.missing_ns, gap, sizeof(gap));
		snprintf(line, sizeof(line), "windows: %zu, %s missing between them (%s)",
			 st.windows, gap, st.missing_hosts);
		profile_add_comment(p, line);
		warning("no window of %s covers %s of the range (hosts: %s): the profile leaves "
			"that time out",
			dir, gap, st.missing_hosts);
	}
	return p;
}

static int show(const struct query_args *a, const struct profile *before,
		const struct profile *after)
{
	enum render_format fmt = a->output && !a->format ? RENDER_PPROF : RENDER_TEXT;
	if (a->format && render_format_parse(a->format, &fmt) < 0)
		usage_die("query", "unknown format '%s' (known: " RENDER_FORMAT_NAMES ")",
			  a->format);
	if (before && fmt != RENDER_TEXT && fmt != RENDER_SVG)
		usage_die("query", "--diff writes --format text or svg");
	struct profile_view pv = {0};
	int err = before ? profile_view_diff(before, after, NULL, NULL, &pv)
			 : profile_view_build(after, NULL, NULL, 0, &pv);
	if (err) {
		int status = profile_view_say_failed("query", after, &pv, err, "the query", NULL,
						     before ? "the base range" : NULL);
		profile_view_release(&pv);
		return status;
	}
	struct render_view v = {.format = fmt,
				.p = after,
				.set = &pv.set,
				.name = "query",
				.top = (size_t)a->top,
				.before = &pv.before,
				.merged = &pv.merged,
				.before_name = "base"};
	const char *out = a->output && strcmp(a->output, "-") != 0 ? a->output : NULL;
	err = outfile_write(out, before ? render_diff_write : render_write, &v);
	profile_view_release(&pv);
	if (err)
		return error("cannot write '%s': %s", out ? out : "standard output",
			     output_strerror(err)),
		       RECCE_EXIT_ERROR;
	if (out)
		note("wrote '%s'", out);
	return 0;
}

/* Opens the store of --store (or the default one), or --clickhouse's. */
static void open_source(const struct query_args *a, struct source *src, char *dir, size_t len)
{
	const char *why;

	if (a->clickhouse) {
		src->fleet = fleet_open("query", a->clickhouse, a->clickhouse_password);
		snprintf(dir, len, "%s", clickhouse_where(src->fleet));
		src->name = dir;
		return;
	}
	if (a->store)
		snprintf(dir, len, "%s", a->store);
	else
		dirs_data(dir, len);
	src->name = dir;
	int err = store_open(dir, 0, &src->store, &why);
	if (err == -ENOENT)
		die("no store in %s: start 'recce agent --continuous', or give --store DIR", dir);
	if (err == -EBADMSG)
		die("%s/" STORE_FILE " is not a recce store", dir);
	if (err)
		die("cannot open the store in %s: %s (%s)", dir, strerror(-err), why);
}

int cmd_query(int argc, char **argv)
{
	struct query_args a;
	char dir[PATH_MAX];

	query_parse_args(&a, argc, argv);
	if (a.output && strcmp(a.output, "-") != 0) {
		int err = outfile_check(a.output);
		if (err)
			die("cannot write '%s': %s", a.output, output_strerror(err));
	}
	int64_t now = (int64_t)time_now_ns(CLOCK_REALTIME);
	struct store_filter f = {
	    .pids = a.pids,
	    .npids = (size_t)a.npids,
	    .comms = a.comms,
	    .ncomms = a.ncomms,
	    .host = a.host,
	    .label_keys = a.keys,
	    .label_values = a.values,
	    .nlabels = a.nlabels,
	};
	range_of(a.from, a.to, "--from", "--to", now, &f);
	struct store_filter base = f;
	if (a.diff)
		range_of(a.from2, a.to2 ? a.to2 : "now", "--from2", "--to2", now, &base);

	struct source src = {0};
	open_source(&a, &src, dir, sizeof(dir));

	int status = RECCE_EXIT_ERROR;
	if (a.windows) {
		status = list_windows(&a, src.store, &f);
		store_close(src.store);
		return status;
	}
	struct profile *after = query_range(&src, &f), *before = NULL;
	if (after && (!a.diff || (before = query_range(&src, &base))))
		status = show(&a, before, after);
	profile_free(after);
	profile_free(before);
	store_close(src.store);
	clickhouse_close(src.fleet);
	for (size_t i = 0; i < a.nlabels; i++)
		free((char *)a.keys[i]);
	for (size_t i = 0; i < a.ncomms; i++)
		free((char *)a.comms[i]);
	free(a.keys);
	free(a.values);
	free(a.comms);
	free(a.pids);
	return status;
}
