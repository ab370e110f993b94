/*
 * The fleet store's backlog (see backlog.h): a marked window read back
 * from the local store, its profiles decoded, and sent again.
 */
#include "continuous/backlog.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/profile.h"
#include "util/array.h"

/* Windows looked at per pump: more than can be in flight. */
#define LOOK_AHEAD (2 * EXPORT_PROCESSES)

/* One window read back: its row and its processes' profiles, the
 * strings copied out of the store's callbacks. */
struct window_copy {
	struct store_window w;
	int found;
	char host[256];
	struct store_profile *sp;
	struct profile **p;
	char **strings; /* every string the rows point to */
	size_t n, sp_cap, p_cap, nstrings, strings_cap;
};

static const char *keep_string(struct window_copy *c, const char *s)
{
	char **grown = array_reserve(c->strings, &c->strings_cap, c->nstrings + 1, sizeof(*grown));
	char *copy = strdup(s ? s : "");

	if (!grown || !copy) {
		free(copy);
		return NULL;
	}
	c->strings = grown;
	c->strings[c->nstrings++] = copy;
	return copy;
}

static int on_window(void *arg, const struct store_window *w)
{
	struct window_copy *c = arg;

	if (w->start_ns != c->w.start_ns)
		return 0;
	c->w = *w;
	snprintf(c->host, sizeof(c->host), "%s", w->host);
	c->w.host = c->host;
	c->found = 1;
	return 1; /* the one that starts at start_ns comes first */
}

static int on_profile(void *arg, const struct store_profile *sp)
{
	struct window_copy *c = arg;
	char why[128];

	if (sp->start_ns != c->w.start_ns)
		return 0;
	struct store_profile *grown = array_reserve(c->sp, &c->sp_cap, c->n + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->sp = grown;
	struct profile **pg = array_reserve(c->p, &c->p_cap, c->n + 1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	c->p = pg;
	struct store_profile *out = &c->sp[c->n];
	*out = *sp;
	out->pprof = NULL;
	out->pprof_len = 0;
	if (!(out->host = keep_string(c, sp->host)) || !(out->comm = keep_string(c, sp->comm)) ||
	    !(out->exe = keep_string(c, sp->exe)) ||
	    !(out->build_id = keep_string(c, sp->build_id)) ||
	    !(out->cgroup = keep_string(c, sp->cgroup)))
		return -ENOMEM;
	int err = pprof_decode(sp->pprof, sp->pprof_len, &c->p[c->n], why, sizeof(why));
	if (err)
		return err;
	c->n++;
	return 0;
}

static void window_copy_release(struct window_copy *c)
{
	for (size_t i = 0; i < c->n; i++)
		profile_free(c->p[i]);
	for (size_t i = 0; i < c->nstrings; i++)
		free(c->strings[i]);
	free(c->strings);
	free(c->sp);
	free(c->p);
}

/* Sends the window that starts at start_ns again. 0, or -errno. */
static int send_again(struct store *s, struct exporter *x, int64_t start_ns)
{
	struct window_copy c = {.w.start_ns = start_ns};
	struct store_filter f = {.from_ns = start_ns, .to_ns = start_ns + 1};

	int err = store_windows(s, start_ns, start_ns + 1, on_window, &c);
	if (err == 1)
		err = 0;
	if (!err && !c.found)
		err = -ENOENT; /* retention took it meanwhile */
	if (!err)
		err = store_each(s, &f, on_profile, &c);
	if (!err)
		err = exporter_send(x, &c.w, c.sp, c.p, c.n, 1);
	window_copy_release(&c);
	return err;
}

int backlog_pump(struct store *s, struct exporter *x, const char *dest)
{
	int64_t starts[LOOK_AHEAD];
	size_t total;
	int started = 0;

	int n = store_unsent(s, dest, starts, LOOK_AHEAD, &total);
	if (n < 0)
		return n;
	for (int i = 0; i < n && exporter_room(x) > 1; i++) {
		if (exporter_sending(x, starts[i]))
			continue;
		int err = send_again(s, x, starts[i]);
		if (err == -ENOENT || err == -EBADMSG) {
			/* Gone, or unreadable: it cannot be sent, ever. */
			store_sent(s, dest, starts[i]);
			continue;
		}
		if (err)
			return started ? started : err;
		started++;
	}
	return started;
}

int64_t backlog_count(struct store *s, const char *dest)
{
	size_t total;
	int n = store_unsent(s, dest, NULL, 0, &total);

	return n < 0 ? n : (int64_t)total;
}
