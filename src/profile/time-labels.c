/*
 * Labels by time (see time-labels.h). Three steps, so that a failure
 * leaves the profile whole: each timeline sample is given its sample
 * (made on first use for a stack and a set of labels, with nothing in
 * it), the timeline is written for the samples as they will be numbered
 * once the emptied ones are gone, and only then are values moved and
 * the empty samples removed.
 */
#include "profile/time-labels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline.h"
#include "util/strpool.h"
#include "util/u64map.h"

/* What a timeline sample weighs in value t: see time-labels.h. */
static int64_t weight(const struct profile *p, size_t t, const struct timeline_event *e)
{
	return strcmp(p->sample_types[t].unit, "count") == 0 ? 1 : e->period;
}

/* The labels as one string, to tell sets apart: each as "KEYLEN:KEY
 * VALLEN:VALUE NUM;", lengths first, so that no label's text can pass
 * for another's however it is made, and whole, however long. */
static const char *set_key(struct strpool *pool, const struct profile_label *l, size_t n)
{
	size_t cap = 1;

	for (size_t i = 0; i < n; i++)
		cap += (l[i].key ? strlen(l[i].key) : 0) + (l[i].str ? strlen(l[i].str) : 0) + 64;
	char *buf = malloc(cap);
	size_t len = 0;
	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *k = l[i].key ? l[i].key : "", *v = l[i].str ? l[i].str : "";
		int w = snprintf(buf + len, cap - len, "%zu:%s %zu:%s %lld;", strlen(k), k,
				 strlen(v), v, (long long)l[i].num);
		if (w < 0 || (size_t)w >= cap - len) {
			free(buf);
			return NULL;
		}
		len += (size_t)w;
	}
	const char *key = strpool_intern_len(pool, buf, len);
	free(buf);
	return key;
}

/* A copy of sample s with labels added (a key it has already is
 * replaced) and nothing in it: its index. */
static int add_labelled(struct profile *p, size_t s, const struct profile_label *add, size_t nadd,
			size_t *index)
{
	const struct profile_sample *ps = &p->samples[s];
	size_t n = ps->nlabels + nadd;
	struct profile_label *labels = calloc(n ? n : 1, sizeof(*labels));
	int64_t *values = calloc(p->nsample_types ? p->nsample_types : 1, sizeof(*values));
	uint64_t *locs = malloc((ps->nlocations ? ps->nlocations : 1) * sizeof(*locs));
	int err = -ENOMEM;

	if (labels && values && locs) {
		size_t k = 0;
		for (size_t i = 0; i < ps->nlabels; i++) {
			size_t j = 0;
			while (j < nadd && strcmp(add[j].key, ps->labels[i].key) != 0)
				j++;
			if (j == nadd)
				labels[k++] = ps->labels[i];
		}
		memcpy(labels + k, add, nadd * sizeof(*add));
		memcpy(locs, ps->location_ids, ps->nlocations * sizeof(*locs));
		err = profile_add_sample(p, locs, ps->nlocations, values, labels, k + nadd);
		*index = p->nsamples - 1;
	}
	free(labels);
	free(values);
	free(locs);
	return err;
}

struct labelling {
	struct profile *p;
	size_t nold;		   /* samples before any was made */
	struct timeline_event *ev; /* their index: the sample each goes to */
	size_t nev;
	uint64_t *from; /* per event: the sample it came from */
	struct strpool keys;
	struct u64map made; /* (old sample << 32 | key number) -> new index + 1 */
	struct u64map key_ids;
};

/* Step one: the sample of each event. */
static int assign(struct labelling *l, time_labels_fn fn, void *arg)
{
	struct profile *p = l->p;

	for (size_t i = 0; i < l->nev; i++) {
		struct timeline_event *e = &l->ev[i];
		size_t s = (size_t)e->index;
		l->from[i] = s;
		const struct profile_label *tid = profile_sample_label(&p->samples[s], "tid");
		struct profile_label add[TIME_LABELS_MAX];
		size_t nadd = fn(arg, tid ? tid->num : 0, e->time_ns, add);
		if (!nadd)
			continue;
		const char *key = set_key(&l->keys, add, nadd);
		if (!key)
			return -ENOMEM;
		uint64_t key_id, have;
		if (!u64map_get(&l->key_ids, (uintptr_t)key, &key_id)) {
			key_id = u64map_count(&l->key_ids);
			if (u64map_put(&l->key_ids, (uintptr_t)key, key_id) < 0)
				return -ENOMEM;
		}
		uint64_t made_key = (uint64_t)s << 32 | key_id;
		if (!u64map_get(&l->made, made_key, &have)) {
			size_t index;
			int err = add_labelled(p, s, add, nadd, &index);
			if (err)
				return err;
			have = index + 1;
			if (u64map_put(&l->made, made_key, have) < 0)
				return -ENOMEM;
		}
		e->index = have - 1;
	}
	return 0;
}

int profile_label_times(struct profile *p, time_labels_fn fn, void *arg)
{
	struct labelling l;
	int err;

	if (!p->timeline)
		return -ENODATA;
	memset(&l, 0, sizeof(l));
	l.p = p;
	l.nold = p->nsamples;
	err = timeline_decode(p->timeline, p->timeline_len, p->nsamples, &l.ev, &l.nev);
	if (err)
		return err;
	strpool_init(&l.keys);
	u64map_init(&l.made);
	u64map_init(&l.key_ids);
	l.from = malloc((l.nev ? l.nev : 1) * sizeof(*l.from));
	err = l.from ? assign(&l, fn, arg) : -ENOMEM;

	/* Step two: what is left in each sample, its number once the empty
	 * ones are gone, and the timeline so numbered. */
	int64_t *left = NULL;
	uint64_t *renumber = NULL;
	unsigned char *buf = NULL;
	size_t len = 0, nt = p->nsample_types;
	if (!err) {
		left = calloc((p->nsamples ? p->nsamples : 1) * (nt ? nt : 1), sizeof(*left));
		renumber = calloc(p->nsamples ? p->nsamples : 1, sizeof(*renumber));
		err = left && renumber ? 0 : -ENOMEM;
	}
	if (!err) {
		for (size_t s = 0; s < p->nsamples; s++)
			for (size_t t = 0; t < nt; t++)
				left[s * nt + t] = p->samples[s].values[t];
		for (size_t i = 0; i < l.nev; i++) {
			if (l.ev[i].index == l.from[i])
				continue;
			for (size_t t = 0; t < nt; t++) {
				int64_t w = weight(p, t, &l.ev[i]);
				int64_t *src = &left[l.from[i] * nt + t];
				*src = *src > w ? *src - w : 0;
				left[l.ev[i].index * nt + t] += w;
			}
		}
		/* An old sample goes when events were moved out of it and
		 * none stayed and nothing is left in it. */
		uint64_t next = 0;
		for (size_t i = 0; i < l.nev; i++)
			renumber[l.from[i]] |= l.ev[i].index == l.from[i] ? 1 : 2;
		for (size_t s = 0; s < p->nsamples; s++) {
			int any = 0;
			for (size_t t = 0; t < nt; t++)
				any |= left[s * nt + t] != 0;
			renumber[s] = s >= l.nold || renumber[s] != 2 || any ? ++next : 0;
		}
		struct timeline_writer w;
		timeline_writer_init(&w, 0);
		for (size_t i = 0; !err && i < l.nev; i++)
			err = timeline_writer_add(&w, renumber[l.ev[i].index] - 1, l.ev[i].time_ns,
						  l.ev[i].period);
		if (!err)
			err = timeline_writer_take(&w, &buf, &len);
		timeline_writer_release(&w);
	}
	if (!err)
		err = profile_set_timeline(p, buf, len);

	/* Step three: nothing here can fail. */
	if (!err) {
		size_t k = 0;
		for (size_t s = 0; s < p->nsamples; s++) {
			if (!renumber[s])
				continue;
			memcpy(p->samples[s].values, &left[s * nt], nt * sizeof(*left));
			p->samples[k++] = p->samples[s];
		}
		p->nsamples = k;
	} else {
		p->nsamples = l.nold; /* the samples made are dropped */
	}
	free(buf);
	free(left);
	free(renumber);
	free(l.ev);
	free(l.from);
	strpool_release(&l.keys);
	u64map_release(&l.made);
	u64map_release(&l.key_ids);
	return err;
}
