/*
 * The profile of a few calls (see capture-profile.h): p's mappings,
 * functions and locations copied over, then for each call the samples of
 * its thread inside its window, cut at the captured function, one profile
 * sample per (call, source sample), and a timeline of the kept samples.
 */
#include "profile/capture-profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/timeline.h"
#include "symbols/demangle.h"
#include "util/array.h"
#include "util/u64map.h"

#define CUT_UNKNOWN (-2)
#define CUT_NONE    (-1)

struct kept_event {
	int64_t time_ns, period;
	uint64_t index; /* in the new profile */
};

struct builder {
	const struct profile *p;
	struct profile *q;
	const char *const *symbols;
	size_t nsymbols;
	uint64_t *fn_remap; /* p's function id -> q's */
	long *cut;	    /* per p sample: index of the outermost frame to keep */
	char **written;	    /* per p function id: its name as a person writes it */
	struct u64map made; /* call << 32 | p sample -> q sample index + 1 */
	struct kept_event *kept;
	size_t nkept, kept_cap;
};

/* Whether f is one of symbols[0..n). */
static int is_captured(const char *const *symbols, size_t n, const struct profile_function *f)
{
	for (size_t i = 0; f && i < n; i++)
		if (strcmp(f->system_name, symbols[i]) == 0 || strcmp(f->name, symbols[i]) == 0)
			return 1;
	return 0;
}

/* The last dotted part of a name: "method" of "module.Class.method". */
static const char *last_part(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot + 1 : name;
}

/* Whether f is call's function, known by its file and its last name. */
static int is_in_file(const struct capture_call *call, const struct profile_function *f)
{
	if (!f || strcmp(last_part(f->name), last_part(call->function)) != 0)
		return 0;
	return call->file_cut ? strncmp(f->file, call->file, strlen(call->file)) == 0
			      : strcmp(f->file, call->file) == 0;
}

/* The name a person writes for function id (demangle_function() of its
 * symbol: "shop::make_key", not "shop::make_key[abi:cxx11](long)"), made
 * once; NULL out of memory or for no function. */
static const char *written_name(struct builder *b, uint64_t id)
{
	const struct profile_function *f = profile_function(b->p, id);

	if (!f || id > b->p->nfunctions)
		return NULL;
	if (!b->written[id])
		b->written[id] = demangle_function(f->system_name);
	return b->written[id];
}

/* Whether function id is the one named fn, as trace names it. */
static int is_named(struct builder *b, uint64_t id, const char *fn)
{
	const char *w;

	if (is_captured(&fn, 1, profile_function(b->p, id)))
		return 1;
	return (w = written_name(b, id)) != NULL && strcmp(w, fn) == 0;
}

/* Whether function id is call's: known by its file and its last name,
 * or by its name. */
static int is_calls(struct builder *b, const struct capture_call *call, uint64_t id)
{
	if (call->file)
		return is_in_file(call, profile_function(b->p, id));
	const char *colon = strchr(call->function, ':');
	return is_named(b, id, colon ? colon + 1 : call->function);
}

/* The outermost location of sample s that holds one of symbols[0..n),
 * or with call, call's function. */
static long outermost(struct builder *b, size_t s, const char *const *symbols, size_t n,
		      const struct capture_call *call)
{
	const struct profile_sample *ps = &b->p->samples[s];
	long cut = CUT_NONE;

	for (size_t i = 0; i < ps->nlocations; i++) {
		const struct profile_location *loc = profile_location(b->p, ps->location_ids[i]);
		for (size_t j = 0; loc && j < loc->nlines; j++) {
			uint64_t id = loc->lines[j].function_id;
			if (call ? is_calls(b, call, id)
				 : is_captured(symbols, n, profile_function(b->p, id)))
				cut = (long)i;
		}
	}
	return cut;
}

/* Where call's sample s is cut: at the captured function (known once a
 * sample), or at the call's own. */
static long cut_of(struct builder *b, const struct capture_call *call, size_t s)
{
	if (call->function)
		return outermost(b, s, NULL, 0, call);
	if (b->cut[s] == CUT_UNKNOWN)
		b->cut[s] = outermost(b, s, b->symbols, b->nsymbols, NULL);
	return b->cut[s];
}

/* p's mappings, functions and locations, with the same location ids. */
static int copy_tables(struct builder *b)
{
	const struct profile *p = b->p;
	struct profile *q = b->q;

	for (size_t i = 0; i < p->nmappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];
		if (!profile_add_mapping(q, m->start, m->limit, m->offset, m->file, m->build_id))
			return -ENOMEM;
	}
	b->fn_remap = calloc(p->nfunctions + 1, sizeof(*b->fn_remap));
	if (!b->fn_remap)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct profile_function *f = &p->functions[i];
		b->fn_remap[f->id] =
		    profile_add_function(q, f->name, f->system_name, f->file, f->start_line);
		if (!b->fn_remap[f->id])
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];
		struct profile_line *lines = calloc(l->nlines ? l->nlines : 1, sizeof(*lines));
		if (!lines)
			return -ENOMEM;
		for (size_t j = 0; j < l->nlines; j++) {
			lines[j] = l->lines[j];
			lines[j].function_id = l->lines[j].function_id <= p->nfunctions
						   ? b->fn_remap[l->lines[j].function_id]
						   : 0;
		}
		uint64_t id = profile_add_location(q, l->mapping_id, l->address, lines, l->nlines);
		free(lines);
		if (!id)
			return -ENOMEM;
	}
	return 0;
}

/* The new sample of (call c, p's sample s), made on first use with the
 * call's frame on top of s cut at the captured function. Returns its
 * index + 1, or 0 when out of memory. */
static uint64_t sample_of(struct builder *b, size_t c, const struct capture_call *call,
			  uint64_t root, size_t s, long cut)
{
	uint64_t key = (uint64_t)c << 32 | s, have;

	if (u64map_get(&b->made, key, &have))
		return have;
	const struct profile_sample *ps = &b->p->samples[s];
	uint64_t *locs = malloc(((size_t)cut + 2) * sizeof(*locs));
	int64_t *values = calloc(b->q->nsample_types ? b->q->nsample_types : 1, sizeof(*values));
	if (!locs || !values) {
		free(locs);
		free(values);
		return 0;
	}
	memcpy(locs, ps->location_ids, ((size_t)cut + 1) * sizeof(*locs));
	locs[cut + 1] = root;
	const struct profile_label *pid = profile_sample_label(ps, "pid");
	struct profile_label labels[4] = {
	    {"pid", NULL, pid ? pid->num : 0, NULL},
	    {"tid", NULL, call->tid, NULL},
	    {"thread", call->name, 0, NULL},
	    {"call", NULL, (int64_t)c + 1, NULL},
	};
	int err = profile_add_sample(b->q, locs, (size_t)cut + 2, values, labels, 4);
	free(locs);
	free(values);
	if (err || u64map_put(&b->made, key, b->q->nsamples) < 0)
		return 0;
	return b->q->nsamples;
}

static int keep(struct builder *b, uint64_t index, const struct timeline_event *e)
{
	struct kept_event *k = array_reserve(b->kept, &b->kept_cap, b->nkept + 1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	b->kept = k;
	b->kept[b->nkept++] = (struct kept_event){e->time_ns, e->period, index};
	struct profile_sample *qs = &b->q->samples[index];
	for (size_t t = 0; t < b->q->nsample_types; t++)
		qs->values[t] += strcmp(b->q->sample_types[t].unit, "count") == 0 ? 1 : e->period;
	return 0;
}

/* The first event at or after t (events are in time order). */
static size_t first_at(const struct timeline_event *ev, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ev[mid].time_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add_call(struct builder *b, size_t c, const struct capture_call *call,
		    const struct timeline_event *ev, size_t nev, struct capture_counts *counts)
{
	uint64_t fn = profile_add_function(b->q, call->name, call->name, "", 0);
	struct profile_line line = {fn, 0};
	uint64_t root = fn ? profile_add_location(b->q, 0, 0, &line, 1) : 0;

	if (!root)
		return -ENOMEM;
	for (size_t i = first_at(ev, nev, call->start_ns); i < nev && ev[i].time_ns <= call->end_ns;
	     i++) {
		const struct profile_label *tid =
		    profile_sample_label(&b->p->samples[ev[i].index], "tid");
		if (!tid || tid->num != (int64_t)call->tid)
			continue;
		long cut = cut_of(b, call, ev[i].index);
		if (cut == CUT_NONE) {
			counts->outside++;
			continue;
		}
		uint64_t s = sample_of(b, c, call, root, ev[i].index, cut);
		if (!s || keep(b, s - 1, &ev[i]) < 0)
			return -ENOMEM;
		counts->kept++;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct kept_event *x = a, *y = b;

	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int write_timeline(struct builder *b)
{
	struct timeline_writer w;
	unsigned char *buf;
	size_t len;

	if (b->nkept) /* calls too short for a sample keep none */
		qsort(b->kept, b->nkept, sizeof(*b->kept), by_time);
	timeline_writer_init(&w, 0);
	for (size_t i = 0; i < b->nkept; i++)
		if (timeline_writer_add(&w, b->kept[i].index, b->kept[i].time_ns,
					b->kept[i].period) < 0) {
			timeline_writer_release(&w);
			return -ENOMEM;
		}
	int err = timeline_writer_take(&w, &buf, &len);
	timeline_writer_release(&w);
	if (err)
		return err;
	err = profile_set_timeline(b->q, buf, len);
	free(buf);
	return err;
}

int capture_profile(const struct profile *p, const char *const *symbols, size_t nsymbols,
		    const struct capture_call *calls, size_t n, struct profile **out,
		    struct capture_counts *counts)
{
	struct builder b;
	struct timeline_event *ev = NULL;
	size_t nev = 0;
	int err;

	*out = NULL;
	memset(counts, 0, sizeof(*counts));
	if (!p->timeline)
		return -ENODATA;
	err = timeline_decode(p->timeline, p->timeline_len, p->nsamples, &ev, &nev);
	if (err)
		return err;
	memset(&b, 0, sizeof(b));
	b.p = p;
	b.symbols = symbols;
	b.nsymbols = nsymbols;
	u64map_init(&b.made);
	b.q = profile_new();
	b.cut = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*b.cut));
	b.written = calloc(p->nfunctions + 1, sizeof(*b.written));
	err = b.q && b.cut && b.written ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < p->nsamples; i++)
		b.cut[i] = CUT_UNKNOWN;
	if (!err)
		err = profile_set_sample_types(b.q, p->sample_types, p->nsample_types);
	if (!err) {
		b.q->default_sample_type = p->default_sample_type;
		b.q->period_type.type = profile_intern(b.q, p->period_type.type);
		b.q->period_type.unit = profile_intern(b.q, p->period_type.unit);
		b.q->period = p->period;
		b.q->time_nanos = p->time_nanos;
		b.q->duration_nanos = p->duration_nanos;
		err = copy_tables(&b);
	}
	for (size_t c = 0; !err && c < n; c++)
		err = add_call(&b, c, &calls[c], ev, nev, counts);
	if (!err)
		err = write_timeline(&b);
	free(ev);
	free(b.fn_remap);
	free(b.cut);
	for (size_t i = 0; b.written && i <= p->nfunctions; i++)
		free(b.written[i]);
	free(b.written);
	free(b.kept);
	u64map_release(&b.made);
	if (err) {
		profile_free(b.q);
		return err;
	}
	*out = b.q;
	return 0;
}
