/*
 * A query of the continuous store: the profiles of the windows and
 * processes a filter picks, merged into one profile (profile/merge.h)
 * whose samples carry the labels of their process: host, pid, comm,
 * exe, build_id and cgroup, beside each sample's own tid and thread.
 * Every writer and `recce report` read the result as they read a
 * recording.
 */
#ifndef RECCE_STORE_QUERY_H
#define RECCE_STORE_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "store/store.h"

struct store_query_stats {
	size_t profiles; /* process profiles merged */
	size_t corrupt;	 /* profiles that did not decode, left out */
	size_t processes;
	int64_t first_ns, last_ns; /* the windows merged: first start, last end */
	/* The windows of the range (of f's host, or of every host): how
	 * many there are, and the time no window covers between each
	 * host's first and last (its agent or profiler was down, or the
	 * fleet store never took them); the hosts with such gaps, by name,
	 * comma-separated (cut short with "..."). */
	size_t windows;
	int64_t missing_ns;
	char missing_hosts[200];
};

/* Counts one host's windows of the range into st: n of them, from the
 * first's start to the last's end, covering covered_ns together. */
void store_tally_host(struct store_query_stats *st, const char *host, size_t n, int64_t first_ns,
		      int64_t last_ns, int64_t covered_ns);

/* Merges the profiles under f into *out (the caller frees it with
 * profile_free(); it has no sample when nothing matched). Returns 0,
 * -ENOMEM, or the store's -errno. */
int store_query(struct store *s, const struct store_filter *f, struct profile **out,
		struct store_query_stats *st);

#endif
