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
