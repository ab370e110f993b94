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

/* What a request asks for: the agent's page's range and command, and
 * the host (f.host, when it names one). */
struct asked {
	struct page_ask p;
	char host[256];
};

static void asked_of(const char *query, struct asked *a)
{
	continuous_http_ask(query, &a->p);
	if (http_query_param(query, "host", a->host, sizeof(a->host)) && a->host[0])
		a->p.f.host = a->host;
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
	int err = s ? clickhouse_series(h->ch, &a->p.f, add_window, add_point, s) : -ENOMEM;

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
	int err = clickhouse_hosts(h->ch, &a->p.f, add_host, &j);
	json_end(&j);
	json_end(&j);
	putc('\n', fp);
	return err;
}

static int profile_of(struct fleet_http *h, const struct asked *a, const char *what, FILE *fp)
{
	struct store_query_stats st;
	struct profile *p;
	int err = clickhouse_query_comms(h->ch, &a->p.f, &p, &st);

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
