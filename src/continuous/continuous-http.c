/*
 * The continuous agent's HTTP routes (see continuous-http.h).
 */
#include "continuous/continuous-http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/query.h"
#include "util/clock.h"
#include "util/http-serve.h"
#include "writers/page.h"

#define HOUR_NS ((int64_t)3600 * 1000000000)

void continuous_http_ask(const char *query, struct page_ask *a)
{
	char v[32];
	int64_t *from = &a->f.from_ns, *to = &a->f.to_ns;

	memset(a, 0, sizeof(*a));
	*to = (int64_t)time_now_ns(CLOCK_REALTIME);
	*from = *to - HOUR_NS;
	if (http_query_param(query, "from", v, sizeof(v)))
		*from = strtoll(v, NULL, 10);
	if (http_query_param(query, "to", v, sizeof(v)) && strtoll(v, NULL, 10) > *from)
		*to = strtoll(v, NULL, 10);
	if (http_query_param(query, "comm", a->comm, sizeof(a->comm)) && a->comm[0]) {
		a->comms[0] = a->comm;
		a->f.comms = a->comms;
		a->f.ncomms = 1;
	}
}

static int add_point(void *arg, int64_t start, int64_t end, const char *comm, int64_t cpu_ns)
{
	return page_series_add(arg, start, end, comm, cpu_ns);
}

static int add_window(void *arg, const struct store_window *w)
{
	return page_series_window(arg, w->start_ns, w->end_ns);
}

static int series(struct continuous_http *h, const char *query, FILE *fp)
{
	struct page_ask a;
	struct page_series *s = page_series_new();

	continuous_http_ask(query, &a);
	int err = s ? store_windows(h->store, a.f.from_ns, a.f.to_ns, add_window, s) : -ENOMEM;
	if (!err)
		err = store_series(h->store, a.f.from_ns, a.f.to_ns, add_point, s);
	if (!err)
		page_series_write(fp, s);
	page_series_free(s);
	return err;
}

static int profile_of(struct continuous_http *h, const char *query, const char *what, FILE *fp)
{
	struct page_ask a;
	struct store_query_stats st;
	struct profile *p;

	continuous_http_ask(query, &a);
	int err = store_query(h->store, &a.f, &p, &st);
	if (err)
		return err;
	/* A range without samples is an empty flamegraph, not an error. */
	err = st.profiles ? page_write_profile(fp, p, what) : 0;
	profile_free(p);
	return err;
}

int continuous_http(void *ctx, const char *path, const char *query, FILE *fp, const char **type)
{
	struct continuous_http *h = ctx;
	int err;

	if (strcmp(path, "/metrics") == 0) {
		if (h->stats_fn)
			h->stats_fn(h->stats_arg);
		continuous_metrics(fp, h->st);
		*type = "text/plain; version=0.0.4";
		return 200;
	}
	if (strcmp(path, "/") == 0) {
		char title[300];
		snprintf(title, sizeof(title), "every process on %s", h->host);
		page_write_html(fp, title);
		*type = "text/html; charset=utf-8";
		return 200;
	}
	if (strcmp(path, "/api/series") == 0) {
		err = series(h, query, fp);
		*type = "application/json";
	} else if (strcmp(path, "/api/flame") == 0 || strcmp(path, "/api/top") == 0) {
		err = profile_of(h, query, path + 5, fp);
	} else {
		return 404;
	}
	if (err)
		fprintf(fp, "cannot read the store: %s\n", strerror(-err));
	return err ? 500 : 200;
}
