/*
 * The in-memory profile model (see profile.h). Strings are interned in a
 * strpool, so equal strings share one pointer and comparing interned
 * strings is comparing pointers. Per-sample arrays live in the same pool's
 * arena: a profile is freed in one sweep.
 */
#include "profile/profile.h"

#include "util/array.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/strpool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct profile_pool {
	struct strpool strings; /* interned strings and, in its arena, per-sample arrays */
	struct htab func_index; /* function hash -> index in functions */
};

/* Makes room for need elements in *arr; 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *n = array_reserve(*arr, cap, need, elem);

	if (!n)
		return -ENOMEM;
	*arr = n;
	return 0;
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pool = calloc(1, sizeof(*p->pool));
	if (!p->pool) {
		free(p);
		return NULL;
	}
	strpool_init(&p->pool->strings);
	p->period_type.type = profile_intern(p, "");
	p->period_type.unit = p->period_type.type;
	p->drop_frames = p->period_type.type;
	p->keep_frames = p->period_type.type;
	if (!p->drop_frames) {
		profile_free(p);
		return NULL;
	}
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	if (p->pool) {
		strpool_release(&p->pool->strings);
		htab_release(&p->pool->func_index);
		free(p->pool);
	}
	free(p->sample_types);
	free(p->samples);
	free(p->locations);
	free(p->functions);
	free(p->mappings);
	free(p->comments);
	free(p);
}

const char *profile_intern(struct profile *p, const char *s)
{
	return strpool_intern(&p->pool->strings, s);
}

int profile_set_sample_types(struct profile *p, const struct profile_value_type *types, size_t n)
{
	struct profile_value_type *t = calloc(n ? n : 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		t[i].type = profile_intern(p, types[i].type);
		t[i].unit = profile_intern(p, types[i].unit);
		if (!t[i].type || !t[i].unit) {
			free(t);
			return -ENOMEM;
		}
	}
	free(p->sample_types);
	p->sample_types = t;
	p->nsample_types = n;
	if (p->default_sample_type >= n)
		p->default_sample_type = 0;
	return 0;
}

uint64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset,
			     const char *file, const char *build_id)
{
	if (grow((void **)&p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*p->mappings)))
		return 0;
	struct profile_mapping *m = &p->mappings[p->nmappings];
	memset(m, 0, sizeof(*m));
	m->file = profile_intern(p, file);
	m->build_id = profile_intern(p, build_id);
	if (!m->file || !m->build_id)
		return 0;
	m->id = ++p->nmappings;
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	return m->id;
}

/* Names are interned, so a function is its three pointers. */
static uint64_t func_hash(const struct profile_function *f)
{
	const void *key[3] = {f->name, f->system_name, f->file};

	return hash_fnv1a_bytes(HASH_FNV1A_INIT, key, sizeof(key));
}

struct wanted_func {
	const struct profile *p;
	const struct profile_function *f;
};

static int same_function(const void *ctx, uint64_t index)
{
	const struct wanted_func *w = ctx;
	const struct profile_function *f = &w->p->functions[index];

	return f->name == w->f->name && f->system_name == w->f->system_name &&
	       f->file == w->f->file;
}

uint64_t profile_add_function(struct profile *p, const char *name, const char *system_name,
			      const char *file, int64_t start_line)
{
	struct profile_pool *pool = p->pool;
	struct profile_function key = {0};

	key.name = profile_intern(p, name);
	key.system_name = profile_intern(p, system_name ? system_name : name);
	key.file = profile_intern(p, file);
	if (!key.name || !key.system_name || !key.file)
		return 0;
	uint64_t h = func_hash(&key);
	struct wanted_func w = {p, &key};
	struct htab_slot *hit = htab_find(&pool->func_index, h, same_function, &w);
	if (hit)
		return p->functions[hit->val].id;
	if (grow((void **)&p->functions, &p->functions_cap, p->nfunctions + 1,
		 sizeof(*p->functions)))
		return 0;
	if (!htab_add(&pool->func_index, h, p->nfunctions))
		return 0;
	key.id = p->nfunctions + 1;
	key.start_line = start_line;
	p->functions[p->nfunctions++] = key;
	return key.id;
}

/* lines[n] copied into p's pool, or NULL when memory runs out. */
static struct profile_line *copy_lines(struct profile *p, const struct profile_line *lines,
				       size_t n)
{
	struct profile_line *copy = arena_alloc(&p->pool->strings.arena, n * sizeof(*copy));

	if (copy)
		memcpy(copy, lines, n * sizeof(*copy));
	return copy;
}

uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct profile_line *lines, size_t nlines)
{
	if (grow((void **)&p->locations, &p->locations_cap, p->nlocations + 1,
		 sizeof(*p->locations)))
		return 0;
	struct profile_line *copy = NULL;
	if (nlines && !(copy = copy_lines(p, lines, nlines)))
		return 0;
	struct profile_location *l = &p->locations[p->nlocations];
	l->id = ++p->nlocations;
	l->mapping_id = mapping_id;
	l->address = address;
	l->nlines = nlines;
	l->lines = copy;
	return l->id;
}

int profile_set_location_lines(struct profile *p, uint64_t id, const struct profile_line *lines,
			       size_t nlines)
{
	if (id == 0 || id > p->nlocations)
		return -EINVAL;
	struct profile_line *copy = NULL;
	if (nlines && !(copy = copy_lines(p, lines, nlines)))
		return -ENOMEM;
	p->locations[id - 1].lines = copy;
	p->locations[id - 1].nlines = nlines;
	return 0;
}

/* What an empty array of a sample points to (never written). */
static int64_t no_values[1];
static uint64_t no_locations[1];
static struct profile_label no_labels[1];

int profile_reserve_samples(struct profile *p, size_t n)
{
	return grow((void **)&p->samples, &p->samples_cap, n, sizeof(*p->samples)) ? -ENOMEM : 0;
}

int profile_add_sample(struct profile *p, const uint64_t *location_ids, size_t nlocations,
		       const int64_t *values, const struct profile_label *labels, size_t nlabels)
{
	for (size_t i = 0; i < nlocations; i++)
		if (location_ids[i] == 0 || location_ids[i] > p->nlocations)
			return -EINVAL;
	if (grow((void **)&p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*p->samples)))
		return -ENOMEM;
	struct profile_sample s = {0};
	s.nlocations = nlocations;
	s.nlabels = nlabels;
	/* One allocation for the three arrays (the values first: int64_t's
	 * alignment suits the others), none for an empty one: a file of
	 * millions of tiny samples costs what they hold. */
	size_t nvalues = p->nsample_types;
	if (nlocations > SIZE_MAX / 64 || nlabels > SIZE_MAX / 64)
		return -ENOMEM;
	size_t bytes =
	    nvalues * sizeof(int64_t) + nlocations * sizeof(uint64_t) + nlabels * sizeof(*s.labels);
	unsigned char *mem = bytes ? arena_alloc(&p->pool->strings.arena, bytes) : NULL;
	if (bytes && !mem)
		return -ENOMEM;
	s.values = nvalues ? (int64_t *)mem : no_values;
	s.location_ids = nlocations ? (uint64_t *)(mem + nvalues * sizeof(int64_t)) : no_locations;
	s.labels = nlabels ? (struct profile_label *)(mem + nvalues * sizeof(int64_t) +
						      nlocations * sizeof(uint64_t))
			   : no_labels;
	if (nlocations)
		memcpy(s.location_ids, location_ids, nlocations * sizeof(uint64_t));
	if (p->nsample_types)
		memcpy(s.values, values, p->nsample_types * sizeof(int64_t));
	for (size_t i = 0; i < nlabels; i++) {
		s.labels[i].key = profile_intern(p, labels[i].key);
		s.labels[i].str = labels[i].str ? profile_intern(p, labels[i].str) : NULL;
		s.labels[i].num = labels[i].num;
		s.labels[i].num_unit = profile_intern(p, labels[i].num_unit);
		if (!s.labels[i].key || !s.labels[i].num_unit ||
		    (labels[i].str && !s.labels[i].str))
			return -ENOMEM;
	}
	p->samples[p->nsamples++] = s;
	return 0;
}

int profile_set_timeline(struct profile *p, const unsigned char *buf, size_t len)
{
	unsigned char *copy = arena_alloc(&p->pool->strings.arena, len ? len : 1);

	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, buf, len);
	p->timeline = copy;
	p->timeline_len = len;
	return 0;
}

int profile_add_comment(struct profile *p, const char *comment)
{
	if (grow((void **)&p->comments, &p->comments_cap, p->ncomments + 1, sizeof(*p->comments)))
		return -ENOMEM;
	const char *c = profile_intern(p, comment);
	if (!c)
		return -ENOMEM;
	p->comments[p->ncomments++] = c;
	return 0;
}

const struct profile_mapping *profile_mapping(const struct profile *p, uint64_t id)
{
	return id >= 1 && id <= p->nmappings ? &p->mappings[id - 1] : NULL;
}

const struct profile_function *profile_function(const struct profile *p, uint64_t id)
{
	return id >= 1 && id <= p->nfunctions ? &p->functions[id - 1] : NULL;
}

const struct profile_location *profile_location(const struct profile *p, uint64_t id)
{
	return id >= 1 && id <= p->nlocations ? &p->locations[id - 1] : NULL;
}

const struct profile_label *profile_sample_label(const struct profile_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nlabels; i++)
		if (strcmp(s->labels[i].key, key) == 0)
			return &s->labels[i];
	return NULL;
}

int profile_sample_type_index(const struct profile *p, const char *type)
{
	for (size_t i = 0; i < p->nsample_types; i++)
		if (strcmp(p->sample_types[i].type, type) == 0)
			return (int)i;
	return -1;
}

const char *profile_comment(const struct profile *p, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < p->ncomments; i++)
		if (strncmp(p->comments[i], key, n) == 0 &&
		    strncmp(p->comments[i] + n, ": ", 2) == 0)
			return p->comments[i] + n + 2;
	return NULL;
}
