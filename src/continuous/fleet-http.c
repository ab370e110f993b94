/*
 * The profile page over the fleet store (see fleet-http.h).
 */
#include "continuous/fleet-http.h"

#include <errno.h>
#include <string.h>

#include "continuous/continuous-http.h"
#include "profile/profile.h"
#include "store/store.h"
#include "util/http-serve.h"
#include "util/json-out.h"
#include "writers/page.h"

/* The range, host and command of a request; host and comm are "" for
 * every one. */
struct asked {
	struct store_filter f;
	char host[256], comm[256];
	const char *comms[1];
};

static void asked_of(const char *query, struct asked *a)
{
	memset(a, 0, sizeof(*a));
	continuous_http_range(query, &a->f.from_ns, &a->f.to_ns);
	if (http_query_param(query, "host", a->host, sizeof(a->host)) && a->host[0])
		a->f.host = a->host;
	if (http_query_param(query, "comm", a->comm, sizeof(a->comm)) && a->comm[0]) {
		a->comms[0] = a->comm;
		a->f.comms = a->comms;
		a->f.ncomms = 1;
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
	int err = s ? clickhouse_series(h->ch, &a->f, add_window, add_point, s) : -ENOMEM;

	if (!err)
		page_series_write(fp, s);
	page_series_free(s);
	return err;
}

static int add_host(void *arg, const char *host, uint64_t windows)
{
	struct json_out *j = arg;

	json_newline(j, "  ");
	json_object(j);
	json_member_string(j, "host", host);
	json_member_uint(j, "windows", windows);
	json_end(j);
	return 0;
}

static int hosts(struct fleet_http *h, const struct asked *a, FILE *fp)
{
	struct json_out j;

	json_out_init(&j, fp);
	json_object(&j);
	json_key(&j, "hosts");
	json_array(&j);
	int err = clickhouse_hosts(h->ch, &a->f, add_host, &j);
	json_end(&j);
	json_end(&j);
	putc('\n', fp);
	return err;
}

static int profile_of(struct fleet_http *h, const struct asked *a, const char *what, FILE *fp)
{
	struct store_query_stats st;
	struct profile *p;
	int err = clickhouse_query_comms(h->ch, &a->f, &p, &st);

	if (err)
		return err;
	/* A range without samples is an empty flamegraph, not an error. */
	err = st.profiles ? page_write_profile(fp, p, what) : 0;
	profile_free(p);
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
		err = hosts(h, &a, fp);
		*type = "application/json";
	} else if (strcmp(path, "/api/flame") == 0 || strcmp(path, "/api/top") == 0) {
		err = profile_of(h, &a, path + 5, fp);
	} else {
		return 404;
	}
	if (err)
		fprintf(fp, "cannot read the fleet store: %s\n",
			clickhouse_error(h->ch)[0] ? clickhouse_error(h->ch) : strerror(-err));
	return err ? 500 : 200;
}
