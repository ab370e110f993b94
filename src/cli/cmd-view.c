/*
 * recce view: serves the profile page (writers/page.h) of one profile
 * file, as `go tool pprof -http` does, until Ctrl-C. The page
 * docs/recce-view.md is its --help.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/profile-messages.h"
#include "cli/usage.h"
#include "profile/profile.h"
#include "util/evloop.h"
#include "util/http-serve.h"
#include "util/path.h"
#include "util/signals.h"
#include "util/tcp.h"
#include "writers/page.h"

struct view_args {
	const char *http;
};

static const struct opt view_options[] = {
    OPT_STRING_(0, "http", "[ADDR:]PORT", struct view_args, http,
		"serve the page here (default 127.0.0.1:0, a free port)"),
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

/* Ctrl-C or SIGTERM: the page is no longer served. */
static void on_stop(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	evloop_stop(arg, 0);
}

/* A connection to the page: answered at once. */
static void on_request(void *arg, int fd, short revents)
{
	(void)revents;
	http_serve(fd, handle, arg);
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
	if (at != argc - 1)
		usage_die("view", "give one profile file: recce view FILE");
	const char *file = argv[at];
	struct profile *p = profile_read_or_say(file);
	if (!p || profile_fill_names_or_say(p, file) < 0) {
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
	note("serving %s at http://%s/ ; Ctrl-C to stop", file, bound);
	struct viewed v = {file, p};
	struct evloop loop;
	evloop_init(&loop);
	if (evloop_add(&loop, sfd, 0, on_stop, &loop) < 0 ||
	    evloop_add(&loop, lfd, 0, on_request, &v) < 0)
		die("out of memory");
	evloop_run(&loop);
	evloop_release(&loop);
	unblock_stop_signals(sfd, &old);
	close(lfd);
	profile_free(p);
	return 0;
}
