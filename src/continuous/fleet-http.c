/*
 * The profile page over the fleet store (see fleet-http.h).
 */
#include "continuous/fleet-http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "continuous/continuous-http.h"
#include "profile/profile.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/http-serve.h"
#include "util/json-out.h"
#include "writers/page.h"

/* What a request asks for: the agent's page's range and command, the
 * host (f.host, when it names one) and the cgroup (a label of f). */
struct asked {
	struct page_ask p;
	char host[256];
	char cgroup[1024];
	const char *key[1], *value[1];
	int by_host; /* the chart's series are the hosts' (by=host) */
};

static void asked_of(const char *query, struct asked *a)
{
	continuous_http_ask(query, &a->p);
	if (http_query_param(query, "host", a->host, sizeof(a->host)) && a->host[0])
		a->p.f.host = a->host;
	char by[8];
	a->by_host = http_query_param(query, "by", by, sizeof(by)) && strcmp(by, "host") == 0;
	if (http_query_param(query, "cgroup", a->cgroup, sizeof(a->cgroup)) && a->cgroup[0]) {
		a->key[0] = "cgroup";
		a->value[0] = a->cgroup;
		a->p.f.label_keys = a->key;
		a->p.f.label_values = a->value;
		a->p.f.nlabels = 1;
	}
}

static int add_window(void *arg, int64_t start, int64_t end)
{
	return page_series_window(arg, start, end);
}

static int add_point(void *arg, int64_t start, int64_t end, const char *comm, int64_t cpu_ns)
{
	return page_series_add(arg, start, end, comm, cpu_ns);
}

static int series(struct fleet_http *h, const struct asked *a, FILE *fp)
{
	struct page_series *s = page_series_new();
	int err =
	    s ? clickhouse_series(h->ch, &a->p.f, a->by_host, add_window, add_point, s) : -ENOMEM;

	if (s && a->by_host)
		page_series_by(s, "host");
	if (!err)
		page_series_write(fp, s);
	page_series_free(s);
	return err;
}

/* A list of names, each with a count: {"LIST": [{"NAME": ..., "COUNT":
 * n}, ...]}, of the hosts or the cgroups. */
struct named_out {
	struct json_out j;
	const char *name, *count;
};

static int add_named(void *arg, const char *name, int64_t n)
{
	struct named_out *o = arg;

	json_newline(&o->j, "  ");
	json_object(&o->j);
	json_member_string(&o->j, o->name, name);
	json_member_uint(&o->j, o->count, n > 0 ? (uint64_t)n : 0);
	json_end(&o->j);
	return 0;
}

static int named_list(struct fleet_http *h, const struct store_filter *f, FILE *fp,
		      const char *list, const char *name, const char *count,
		      int (*lister)(struct clickhouse *ch, const struct store_filter *f,
				    int (*fn)(void *arg, const char *name, int64_t n), void *arg))
{
	struct named_out o = {.name = name, .count = count};

	json_out_init(&o.j, fp);
	json_object(&o.j);
	json_key(&o.j, list);
	json_array(&o.j);
	int err = lister(h->ch, f, add_named, &o);
	json_end(&o.j);
	json_end(&o.j);
	putc('\n', fp);
	return err;
}

/* How long a profile is kept for the other request of its pair. */
#define KEPT_NS (5 * 1000000000ull)

void fleet_http_release(struct fleet_http *h)
{
	profile_free(h->kept);
	free(h->kept_query);
	h->kept = NULL;
	h->kept_query = NULL;
}

/* The profile kept for query, when what is the other of the pair that
 * read it, and it is fresh: taken (1), or 0. */
static int take_kept(struct fleet_http *h, const char *query, const char *what, struct profile **p,
		     int *empty)
{
	int fresh = h->kept_query && strcmp(h->kept_query, query) == 0 &&
		    strcmp(h->kept_what, what) != 0 &&
		    time_now_ns(CLOCK_MONOTONIC) - h->kept_ns < KEPT_NS;

	if (!fresh)
		return 0;
	*p = h->kept;
	*empty = h->kept_empty;
	h->kept = NULL;
	fleet_http_release(h);
	return 1;
}

/* Keeps p for the other request of the pair (a copy of query; without
 * memory, nothing is kept). Takes p. */
static void keep(struct fleet_http *h, const char *query, const char *what, struct profile *p,
		 int empty)
{
	fleet_http_release(h);
	h->kept_query = strdup(query);
	if (!h->kept_query) {
		profile_free(p);
		return;
	}
	h->kept = p;
	h->kept_empty = empty;
	h->kept_ns = time_now_ns(CLOCK_MONOTONIC);
	snprintf(h->kept_what, sizeof(h->kept_what), "%s", what);
}

static int profile_of(struct fleet_http *h, const struct asked *a, const char *query,
		      const char *what, FILE *fp)
{
	struct store_query_stats st;
	struct profile *p;
	int empty, err = 0, kept = take_kept(h, query, what, &p, &empty);

	if (!kept) {
		err = clickhouse_query_comms(h->ch, &a->p.f, &p, &st);
		if (err)
			return err;
		empty = !st.profiles;
	}
	/* A range without samples is an empty flamegraph, not an error. */
	err = empty ? 0 : page_write_profile(fp, p, what);
	if (kept || err)
		profile_free(p);
	else
		keep(h, query, what, p, empty);
	return err;
}

int fleet_http(void *ctx, const char *path, const char *query, FILE *fp, const char **type)
{
	struct fleet_http *h = ctx;
	struct asked a;
	int err;

	if (strcmp(path, "/") == 0) {
		char title[400];
		snprintf(title, sizeof(title), "the fleet in %s", h->title);
		page_write_html(fp, title);
		*type = "text/html; charset=utf-8";
		return 200;
	}
	asked_of(query, &a);
	if (strcmp(path, "/api/series") == 0) {
		err = series(h, &a, fp);
		*type = "application/json";
	} else if (strcmp(path, "/api/hosts") == 0) {
		err = named_list(h, &a.p.f, fp, "hosts", "host", "windows", clickhouse_hosts);
		*type = "application/json";
	} else if (strcmp(path, "/api/cgroups") == 0) {
		/* Every cgroup of the range and host, whichever the page shows. */
		a.p.f.nlabels = 0;
		a.p.f.ncomms = 0;
		err = named_list(h, &a.p.f, fp, "cgroups", "cgroup", "cpu_ns", clickhouse_cgroups);
		*type = "application/json";
	} else if (strcmp(path, "/api/flame") == 0 || strcmp(path, "/api/top") == 0) {
		err = profile_of(h, &a, query, path + 5, fp);
	} else {
		return 404;
	}
	if (err)
		fprintf(fp, "cannot read the fleet store: %s\n",
			clickhouse_error(h->ch)[0] ? clickhouse_error(h->ch) : strerror(-err));
	return err ? 500 : 200;
}
