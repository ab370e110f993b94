/*
 * Profiles added into one (see merge.h): the source's mappings, functions
 * and locations are found again or added in the destination, through
 * tables keyed by a hash of their content, and its samples are summed into
 * a destination sample with the same stack and labels.
 */
#include "profile/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

void profile_merger_init(struct profile_merger *m, struct profile *dst)
{
	memset(m, 0, sizeof(*m));
	m->dst = dst;
	htab_init(&m->mappings);
	htab_init(&m->locations);
	htab_init(&m->samples);
}

void profile_merger_release(struct profile_merger *m)
{
	htab_release(&m->mappings);
	htab_release(&m->locations);
	htab_release(&m->samples);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_fnv1a_str(h, s ? s : "");
}

static int str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The source's mapping, for the tables' equality callbacks. */
struct want_mapping {
	const struct profile *dst;
	const struct profile_mapping *m;
};

static int mapping_eq(const void *ctx, uint64_t id)
{
	const struct want_mapping *w = ctx;
	const struct profile_mapping *d = profile_mapping(w->dst, id);

	return d->start == w->m->start && d->limit == w->m->limit && d->offset == w->m->offset &&
	       str_eq(d->file, w->m->file) && str_eq(d->build_id, w->m->build_id);
}

static uint64_t mapping_of(struct profile_merger *m, const struct profile_mapping *sm)
{
	uint64_t h = hash_fnv1a_value(HASH_FNV1A_INIT, sm->start);
	h = hash_fnv1a_value(h, sm->limit);
	h = hash_fnv1a_value(h, sm->offset);
	h = hash_str(hash_str(h, sm->file), sm->build_id);
	struct want_mapping w = {m->dst, sm};
	struct htab_slot *slot = htab_find(&m->mappings, h, mapping_eq, &w);
	if (slot)
		return slot->val;
	uint64_t id =
	    profile_add_mapping(m->dst, sm->start, sm->limit, sm->offset, sm->file, sm->build_id);
	if (!id || !htab_add(&m->mappings, h, id))
		return 0;
	struct profile_mapping *dm = &m->dst->mappings[id - 1];
	dm->has_functions = sm->has_functions;
	dm->has_filenames = sm->has_filenames;
	dm->has_line_numbers = sm->has_line_numbers;
	dm->has_inline_frames = sm->has_inline_frames;
	return id;
}

struct want_location {
	const struct profile *dst;
	uint64_t mapping_id, address;
	const struct profile_line *lines;
	size_t nlines;
};

static int location_eq(const void *ctx, uint64_t id)
{
	const struct want_location *w = ctx;
	const struct profile_location *d = profile_location(w->dst, id);

	if (d->mapping_id != w->mapping_id || d->address != w->address || d->nlines != w->nlines)
		return 0;
	for (size_t i = 0; i < d->nlines; i++)
		if (d->lines[i].function_id != w->lines[i].function_id ||
		    d->lines[i].line != w->lines[i].line)
			return 0;
	return 1;
}

/* The destination's id of the source's location id, or 0 when out of
 * memory. */
static uint64_t location_of(struct profile_merger *m, const struct profile *src, uint64_t sid)
{
	const struct profile_location *sl = profile_location(src, sid);
	if (!sl)
		return 0;
	uint64_t mapping = 0;
	const struct profile_mapping *sm = profile_mapping(src, sl->mapping_id);
	if (sm && !(mapping = mapping_of(m, sm)))
		return 0;
	struct profile_line stack_lines[8];
	struct profile_line *lines = stack_lines;
	if (sl->nlines > 8 && !(lines = malloc(sl->nlines * sizeof(*lines))))
		return 0;
	uint64_t h = hash_fnv1a_value(hash_fnv1a_value(HASH_FNV1A_INIT, mapping), sl->address);
	uint64_t id = 0;
	for (size_t i = 0; i < sl->nlines; i++) {
		const struct profile_function *f = profile_function(src, sl->lines[i].function_id);
		lines[i].line = sl->lines[i].line;
		lines[i].function_id = f ? profile_add_function(m->dst, f->name, f->system_name,
								f->file, f->start_line)
					 : 0;
		if (f && !lines[i].function_id)
			goto out;
		h = hash_fnv1a_value(hash_fnv1a_value(h, lines[i].function_id),
				     (uint64_t)lines[i].line);
	}
	struct want_location w = {m->dst, mapping, sl->address, lines, sl->nlines};
	struct htab_slot *slot = htab_find(&m->locations, h, location_eq, &w);
	if (slot) {
		id = slot->val;
		goto out;
	}
	id = profile_add_location(m->dst, mapping, sl->address, lines, sl->nlines);
	if (id && !htab_add(&m->locations, h, id))
		id = 0;
out:
	if (lines != stack_lines)
		free(lines);
	return id;
}

struct want_sample {
	const struct profile *dst;
	const uint64_t *locs;
	size_t nlocs;
	const struct profile_label *labels;
	size_t nlabels;
};

static int label_eq(const struct profile_label *a, const struct profile_label *b)
{
	return str_eq(a->key, b->key) && (a->str != NULL) == (b->str != NULL) &&
	       (a->str ? str_eq(a->str, b->str) : a->num == b->num) &&
	       str_eq(a->num_unit, b->num_unit);
}

static int sample_eq(const void *ctx, uint64_t index)
{
	const struct want_sample *w = ctx;
	const struct profile_sample *d = &w->dst->samples[index];

	if (d->nlocations != w->nlocs || d->nlabels != w->nlabels ||
	    memcmp(d->location_ids, w->locs, w->nlocs * sizeof(*w->locs)) != 0)
		return 0;
	for (size_t i = 0; i < d->nlabels; i++)
		if (!label_eq(&d->labels[i], &w->labels[i]))
			return 0;
	return 1;
}

static uint64_t labels_hash(uint64_t h, const struct profile_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = hash_str(h, l[i].key);
		h = l[i].str ? hash_str(h, l[i].str) : hash_fnv1a_value(h, (uint64_t)l[i].num);
	}
	return h;
}

/* Whether s has every label m->only[] asks for. */
static int wanted(const struct profile_merger *m, const struct profile_sample *s)
{
	for (size_t i = 0; i < m->nonly; i++) {
		const struct profile_label *l = profile_sample_label(s, m->only[i].key);
		if (!l || l->str || l->num != m->only[i].num)
			return 0;
	}
	return 1;
}

/* Whether label l is one m->only[] says to leave out. */
static int dropped(const struct profile_merger *m, const struct profile_label *l)
{
	for (size_t i = 0; i < m->nonly; i++)
		if (m->only[i].drop && !strcmp(l->key, m->only[i].key))
			return 1;
	return 0;
}

/* Adds one sample of src, with its labels then the extra ones. */
static int merge_sample(struct profile_merger *m, const struct profile *src,
			const struct profile_sample *s, const size_t *columns,
			const struct profile_label *extra, size_t nextra, uint64_t **locs,
			size_t *locs_cap, struct profile_label **labels, size_t *labels_cap)
{
	if (s->nlocations > *locs_cap) {
		uint64_t *grown = realloc(*locs, s->nlocations * sizeof(**locs));
		if (!grown)
			return -ENOMEM;
		*locs = grown;
		*locs_cap = s->nlocations;
	}
	size_t nlabels = s->nlabels + nextra;
	if (nlabels > *labels_cap) {
		struct profile_label *grown = realloc(*labels, nlabels * sizeof(**labels));
		if (!grown)
			return -ENOMEM;
		*labels = grown;
		*labels_cap = nlabels;
	}
	uint64_t h = HASH_FNV1A_INIT;
	for (size_t i = 0; i < s->nlocations; i++) {
		if (!((*locs)[i] = location_of(m, src, s->location_ids[i])))
			return -ENOMEM;
		h = hash_fnv1a_value(h, (*locs)[i]);
	}
	nlabels = 0;
	for (size_t i = 0; i < s->nlabels; i++)
		if (!dropped(m, &s->labels[i]))
			(*labels)[nlabels++] = s->labels[i];
	if (nextra)
		memcpy(*labels + nlabels, extra, nextra * sizeof(**labels));
	nlabels += nextra;
	h = labels_hash(hash_fnv1a_value(h, s->nlocations), *labels, nlabels);

	struct profile *dst = m->dst;
	struct want_sample w = {dst, *locs, s->nlocations, *labels, nlabels};
	struct htab_slot *slot = htab_find(&m->samples, h, sample_eq, &w);
	if (slot) {
		int64_t *v = dst->samples[slot->val].values;
		for (size_t t = 0; t < dst->nsample_types; t++)
			if (columns[t] != SIZE_MAX)
				v[t] += s->values[columns[t]];
		return 0;
	}
	int64_t values[16] = {0};
	for (size_t t = 0; t < dst->nsample_types; t++)
		if (columns[t] != SIZE_MAX)
			values[t] = s->values[columns[t]];
	int ret = profile_add_sample(dst, *locs, s->nlocations, values, *labels, nlabels);
	if (ret)
		return ret;
	return htab_add(&m->samples, h, dst->nsamples - 1) ? 0 : -ENOMEM;
}

int profile_merge(struct profile_merger *m, const struct profile *src,
		  const struct profile_label *extra, size_t nextra)
{
	struct profile *dst = m->dst;
	int ret = 0;

	if (!dst->nsample_types) {
		if (src->nsample_types > 16)
			return -EINVAL;
		ret = profile_set_sample_types(dst, src->sample_types, src->nsample_types);
		if (ret)
			return ret;
		dst->default_sample_type = src->default_sample_type;
		dst->period_type.type = profile_intern(dst, src->period_type.type);
		dst->period_type.unit = profile_intern(dst, src->period_type.unit);
		dst->period = src->period;
	}
	/* Each destination type takes the source's column of the same name
	 * and unit; a type the source lacks adds nothing. */
	size_t columns[16];
	for (size_t t = 0; t < dst->nsample_types; t++) {
		columns[t] = SIZE_MAX;
		for (size_t c = 0; c < src->nsample_types; c++)
			if (str_eq(dst->sample_types[t].type, src->sample_types[c].type) &&
			    str_eq(dst->sample_types[t].unit, src->sample_types[c].unit))
				columns[t] = c;
	}
	if (src->time_nanos && (!dst->time_nanos || src->time_nanos < dst->time_nanos)) {
		int64_t end = dst->time_nanos + dst->duration_nanos;
		dst->time_nanos = src->time_nanos;
		dst->duration_nanos = end > dst->time_nanos ? end - dst->time_nanos : 0;
	}
	int64_t src_end = src->time_nanos + src->duration_nanos;
	if (src_end > dst->time_nanos + dst->duration_nanos)
		dst->duration_nanos = src_end - dst->time_nanos;

	uint64_t *locs = NULL;
	struct profile_label *labels = NULL;
	size_t locs_cap = 0, labels_cap = 0;
	for (size_t i = 0; i < src->nsamples && !ret; i++) {
		if (!wanted(m, &src->samples[i]))
			continue;
		ret = merge_sample(m, src, &src->samples[i], columns, extra, nextra, &locs,
				   &locs_cap, &labels, &labels_cap);
	}
	free(locs);
	free(labels);
	return ret;
}
