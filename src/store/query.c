/*
 * A query of the continuous store (see query.h): each stored profile
 * decoded and merged with its process's labels.
 */
#include "store/query.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "profile/merge.h"
#include "profile/pprof.h"
#include "util/u64map.h"

struct query {
	struct profile_merger merger;
	struct store_query_stats *st;
	struct u64map pids;
};

static int merge_one(void *arg, const struct store_profile *sp)
{
	struct query *q = arg;
	struct profile *p;
	char why[128];

	int err = pprof_decode(sp->pprof, sp->pprof_len, &p, why, sizeof(why));
	if (err == -ENOMEM)
		return err;
	if (err) {
		q->st->corrupt++;
		return 0;
	}
	/* pprof cannot tell an empty string label from the number 0: an
	 * unknown one is left out. */
	const struct profile_label all[] = {
	    {.key = "host", .str = sp->host},	  {.key = "comm", .str = sp->comm},
	    {.key = "exe", .str = sp->exe},	  {.key = "build_id", .str = sp->build_id},
	    {.key = "cgroup", .str = sp->cgroup},
	};
	struct profile_label labels[sizeof(all) / sizeof(all[0])];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].str && all[i].str[0])
			labels[n++] = all[i];
	err = profile_merge(&q->merger, p, labels, n);
	profile_free(p);
	if (err)
		return err;
	if (!q->st->profiles || sp->start_ns < q->st->first_ns)
		q->st->first_ns = sp->start_ns;
	if (sp->end_ns > q->st->last_ns)
		q->st->last_ns = sp->end_ns;
	q->st->profiles++;
	u64map_put(&q->pids, (uint64_t)sp->pid, 1);
	return 0;
}

/* A gap shorter than this is clock rounding, not time lost. */
#define GAP_MIN_NS 1000000

void store_tally_host(struct store_query_stats *st, const char *host, size_t n, int64_t first_ns,
		      int64_t last_ns, int64_t covered_ns)
{
	st->windows += n;
	int64_t gap = last_ns - first_ns - covered_ns;
	if (gap < GAP_MIN_NS)
		return;
	st->missing_ns += gap;
	size_t used = strlen(st->missing_hosts), room = sizeof(st->missing_hosts) - used;
	if (room > 4 &&
	    (size_t)snprintf(st->missing_hosts + used, room, "%s%s", used ? "," : "", host) >= room)
		snprintf(st->missing_hosts + sizeof(st->missing_hosts) - 4, 4, "...");
}

/* Each host's windows as they come, in time order (the local store,
 * which has one host but for a store copied from several). */
#define TALLY_HOSTS 16

struct tally {
	struct store_query_stats *st;
	const char *only; /* f's host, or NULL */
	struct host_tally {
		char host[256];
		size_t n;
		int64_t first, last, covered;
	} h[TALLY_HOSTS];
	size_t nh;
};

static int tally_window(void *arg, const struct store_window *w)
{
	struct tally *t = arg;
	size_t i = 0;

	if (t->only && strcmp(t->only, w->host) != 0)
		return 0;
	while (i < t->nh && strcmp(t->h[i].host, w->host) != 0)
		i++;
	if (i == t->nh) {
		if (t->nh == TALLY_HOSTS) {
			t->st->windows++; /* counted, not checked for gaps */
			return 0;
		}
		struct host_tally *h = &t->h[t->nh++];
		snprintf(h->host, sizeof(h->host), "%s", w->host);
		h->first = w->start_ns;
	}
	struct host_tally *h = &t->h[i];
	h->n++;
	h->last = w->end_ns;
	h->covered += w->end_ns - w->start_ns;
	return 0;
}

int store_query(struct store *s, const struct store_filter *f, struct profile **out,
		struct store_query_stats *st)
{
	struct query q;

	memset(st, 0, sizeof(*st));
	*out = profile_new();
	if (!*out)
		return -ENOMEM;
	q.st = st;
	profile_merger_init(&q.merger, *out);
	u64map_init(&q.pids);
	int err = store_each(s, f, merge_one, &q);
	st->processes = u64map_count(&q.pids);
	struct tally t = {.st = st, .only = f->host};
	if (!err && !(err = store_windows(s, f->from_ns, f->to_ns, tally_window, &t)))
		for (size_t i = 0; i < t.nh; i++)
			store_tally_host(st, t.h[i].host, t.h[i].n, t.h[i].first, t.h[i].last,
					 t.h[i].covered);
	profile_merger_release(&q.merger);
	u64map_release(&q.pids);
	if (!err && st->profiles) {
		/* The windows merged, within the range asked for. */
		int64_t from = st->first_ns > f->from_ns ? st->first_ns : f->from_ns;
		int64_t to = st->last_ns < f->to_ns ? st->last_ns : f->to_ns;
		(*out)->time_nanos = from;
		(*out)->duration_nanos = to > from ? to - from : 0;
	}
	if (err) {
		profile_free(*out);
		*out = NULL;
	}
	return err;
}
