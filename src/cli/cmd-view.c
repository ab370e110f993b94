/*
 * recce view: serves the profile page (writers/page.h) of one profile
 * file, as `go tool pprof -http` does, or of the fleet store
 * (continuous/fleet-http.h), until Ctrl-C. The page docs/recce-view.md
 * is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/fleet-open.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "continuous/fleet-http.h"
#include "profile/profile.h"
#include "store/store.h"
#include "util/evloop.h"
#include "util/hex.h"
#include "util/http-serve.h"
#include "util/path.h"
#include "util/signals.h"
#include "util/tcp.h"
#include "writers/page.h"

struct view_args {
	const char *http;
	const char *clickhouse, *clickhouse_password;
};

static const struct opt view_options[] = {
    OPT_STRING_(0, "http", "[ADDR:]PORT", struct view_args, http,
		"serve the page here (default 127.0.0.1:0, a free port)"),
    OPT_STRING_(0, "clickhouse", "clickhouse://HOST[:PORT]/DB", struct view_args, clickhouse,
		"the page of the fleet store the agents export to, not of a file"),
    OPT_STRING_(0, "clickhouse-password", "FILE", struct view_args, clickhouse_password,
		"--clickhouse's password, from the first line of FILE (never in the URL)"),
    OPT_END_(),
};

struct viewed {
	const char *file;
	const struct profile *p;
};

static int handle(void *ctx, const char *path, const char *query, FILE *fp, const char **type)
{
	const struct viewed *v = ctx;

	(void)query;
	if (strcmp(path, "/") == 0) {
		page_write_html(fp, path_base(v->file));
		*type = "text/html; charset=utf-8";
		return 200;
	}
	if (strcmp(path, "/api/series") == 0) {
		/* One file is one range: no chart. */
		fputs("{\"windows\": [], \"series\": []}\n", fp);
		*type = "application/json";
		return 200;
	}
	if (strcmp(path, "/api/flame") == 0 || strcmp(path, "/api/top") == 0) {
		int err = page_write_profile(fp, v->p, path + 5);
		if (err)
			fprintf(fp, "cannot show the profile: %s\n", strerror(-err));
		return err ? 500 : 200;
	}
	return 404;
}

static int no_host(void *arg, const char *host, int64_t windows)
{
	(void)arg;
	(void)host;
	(void)windows;
	return 0;
}

/* Ctrl-C or SIGTERM: the page is no longer served. */
static void on_stop(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	evloop_stop(arg, 0);
}

/* What a connection to the page is answered with, and the token every
 * request must carry (NULL: none). */
struct served {
	http_handler_fn fn;
	void *ctx;
	const char *token;
};

/* A connection to the page: answered at once. */
static void on_request(void *arg, int lfd, short revents)
{
	const struct served *s = arg;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	(void)revents;
	if (fd >= 0)
		http_serve_conn(fd, s->token, s->fn, s->ctx);
}

/* A token of 32 hex digits for the fleet's page: what the fleet store
 * holds is not for every user of this machine, who may all reach a
 * port on loopback. */
static const char *new_token(void)
{
	static char token[33];
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		die("cannot make the page's token: %s", strerror(errno));
	hex_of(r, sizeof(r), token);
	return token;
}

int cmd_view(int argc, char **argv)
{
	struct view_args a = {0};
	char bound[128];
	sigset_t old;

	/* A browser that leaves mid-answer is an error of that write, not
	 * the end of the page. */
	signal(SIGPIPE, SIG_IGN);
	int at = options_parse("view", view_options, 0, argc, argv, &a, NULL);
	if (a.clickhouse_password && !a.clickhouse)
		usage_die("view", "--clickhouse-password goes with --clickhouse");
	if (a.clickhouse && at != argc)
		usage_die("view", "give a profile file or --clickhouse URL, not both");
	if (!a.clickhouse && at != argc - 1)
		usage_die("view", "give one profile file: recce view FILE");
	const char *file = a.clickhouse ? NULL : argv[at];
	struct profile *p = NULL;
	struct fleet_http fleet = {0};
	if (a.clickhouse) {
		fleet.ch = fleet_open("view", a.clickhouse, a.clickhouse_password);
		fleet.title = clickhouse_where(fleet.ch);
		/* Asked once now, so that a wrong URL, password or database is
		 * said here and not on the page. */
		struct store_filter f = {.from_ns = 0, .to_ns = 1};
		int err = clickhouse_hosts(fleet.ch, &f, no_host, NULL);
		if (err)
			die("cannot read the fleet store at %s: %s", fleet.title,
			    clickhouse_error(fleet.ch));
	} else if (!(p = profile_read_or_say(file)) || profile_fill_names_or_say(p, file) < 0) {
		profile_free(p);
		return RECCE_EXIT_ERROR;
	}
	const char *spec = a.http ? a.http : "127.0.0.1:0";
	int lfd = tcp_listen(spec, bound, sizeof(bound));
	if (lfd == -EINVAL)
		usage_die("view", "--http wants [ADDR:]PORT, not '%s'", spec);
	if (lfd < 0)
		die("cannot listen on %s: %s: give another --http", spec, strerror(-lfd));
	if (strncmp(bound, "127.", 4) != 0 && strncmp(bound, "[::1]", 5) != 0)
		die("--http %s: the page is served on loopback only (reach it through 'ssh -L')",
		    spec);
	int sfd = block_stop_signals(&old);
	struct viewed v = {file, p};
	struct served served = {handle, &v, NULL};
	if (a.clickhouse) {
		served = (struct served){fleet_http, &fleet, new_token()};
		note("serving the fleet store at %s on http://%s/?token=%s ; Ctrl-C to stop",
		     fleet.title, bound, served.token);
	} else {
		note("serving %s at http://%s/ ; Ctrl-C to stop", file, bound);
	}
	struct evloop loop;
	evloop_init(&loop);
	if (evloop_add(&loop, sfd, 0, on_stop, &loop) < 0 ||
	    evloop_add(&loop, lfd, 0, on_request, &served) < 0)
		die("out of memory");
	evloop_run(&loop);
	evloop_release(&loop);
	unblock_stop_signals(sfd, &old);
	close(lfd);
	profile_free(p);
	fleet_http_release(&fleet);
	clickhouse_close(fleet.ch);
	return 0;
}
