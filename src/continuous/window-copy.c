/*
 * A window of the local store read back (see window-copy.h): its row
 * found by its start, its processes' profiles decoded, every string
 * copied out of the store's callbacks.
 */
#include "continuous/window-copy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/profile.h"
#include "util/array.h"

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

void window_copy_release(struct window_copy *c)
{
	for (size_t i = 0; i < c->n; i++)
		profile_free(c->p[i]);
	for (size_t i = 0; i < c->nstrings; i++)
		free(c->strings[i]);
	free(c->strings);
	free(c->sp);
	free(c->p);
}

int window_copy_read(struct store *s, int64_t start_ns, struct window_copy *c)
{
	struct store_filter f = {.from_ns = start_ns, .to_ns = start_ns + 1};

	c->w.start_ns = start_ns;
	int err = store_windows(s, start_ns, start_ns + 1, on_window, c);
	if (err == 1)
		err = 0;
	if (!err && !c->found)
		err = -ENOENT;
	if (!err)
		err = store_each(s, &f, on_profile, c);
	return err;
}
