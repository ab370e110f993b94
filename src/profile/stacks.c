/*
 * Stacks (see stacks.h). A location's frames do not depend on the sample
 * it appears in, so they are built once per location (names chosen, inline
 * chain turned root first) and each sample's stack is the concatenation of
 * its locations' frames. The focus and ignore regexes are likewise run once
 * per function and per unnamed location, never per sample: a profile of
 * 10,000 samples of 50 frames would otherwise cost half a million regexec()
 * calls.
 */
#include "profile/stacks.h"

#include "profile/timeline.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/path.h"
#include "util/sat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MATCH_FOCUS  1
#define MATCH_IGNORE 2

/* A location's frames, outermost first, in a shared array. */
struct loc_frames {
	size_t first, n;
	int match; /* MATCH_* of any of its frames */
};

/* The displayed name of a function: its name, else its system name; NULL
 * when it has neither (or when there is no such function). */
static const char *function_display_name(const struct profile_function *f)
{
	if (!f)
		return NULL;
	if (*f->name)
		return f->name;
	return *f->system_name ? f->system_name : NULL;
}

static int name_match(const struct stack_filter *filter, const char *name)
{
	int m = 0;

	if (filter && filter->focus && regexec(filter->focus, name, 0, NULL, 0) == 0)
		m |= MATCH_FOCUS;
	if (filter && filter->ignore && regexec(filter->ignore, name, 0, NULL, 0) == 0)
		m |= MATCH_IGNORE;
	return m;
}

/* Whether a location needs a generated name: it has no lines, or a line
 * whose function has no name. */
static int location_needs_name(const struct profile *p, const struct profile_location *l)
{
	if (!l->nlines)
		return 1;
	for (size_t i = 0; i < l->nlines; i++)
		if (!function_display_name(profile_function(p, l->lines[i].function_id)))
			return 1;
	return 0;
}

/* Writes the "MODULE+0xOFFSET" or "0xADDRESS" name of l into buf (at most
 * size bytes) and returns its length without the NUL. */
static size_t location_name(const struct profile *p, const struct profile_location *l, char *buf,
			    size_t size)
{
	const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
	int n;

	if (m && *m->file && l->address >= m->start)
		n = snprintf(buf, size, "%s+0x%llx", path_base(m->file),
			     (unsigned long long)(l->address - m->start + m->offset));
	else
		n = snprintf(buf, size, "0x%llx", (unsigned long long)l->address);
	return n < 0 ? 0 : (size_t)n;
}

/*
 * Builds every location's frames into *frames (outermost first per
 * location) and the generated names into set->name_pool.
 */
static int locations_build(const struct profile *p, const struct stack_filter *filter,
			   struct loc_frames *info, struct stack_frame **frames,
			   struct stack_set *set)
{
	size_t nframes = 0, names_size = 1;

	for (size_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];

		nframes += l->nlines ? l->nlines : 1;
		if (location_needs_name(p, l))
			names_size += location_name(p, l, NULL, 0) + 1;
	}
	int *fmatch = calloc(p->nfunctions + 1, sizeof(*fmatch));
	*frames = calloc(nframes ? nframes : 1, sizeof(**frames));
	set->name_pool = malloc(names_size);
	if (!fmatch || !*frames || !set->name_pool) {
		free(fmatch);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nfunctions; i++) {
		const char *name = function_display_name(&p->functions[i]);
		fmatch[i + 1] = name ? name_match(filter, name) : 0;
	}

	char *names = set->name_pool;
	size_t at = 0;
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];
		const struct profile_mapping *m = profile_mapping(p, l->mapping_id);
		const char *module = m ? path_base(m->file) : "";
		const char *generated = NULL;

		if (location_needs_name(p, l)) {
			generated = names;
			names += location_name(p, l, names, names_size) + 1;
			names_size -= (size_t)(names - generated);
		}
		info[i].first = at;
		info[i].n = l->nlines ? l->nlines : 1;
		info[i].match = generated ? name_match(filter, generated) : 0;
		if (!l->nlines) {
			(*frames)[at++] = (struct stack_frame){generated, "", 0, module};
			continue;
		}
		/* lines[] runs innermost first; a stack runs root first. */
		for (size_t j = l->nlines; j-- > 0;) {
			const struct profile_line *ln = &l->lines[j];
			const struct profile_function *f = profile_function(p, ln->function_id);
			const char *name = function_display_name(f);

			if (name)
				info[i].match |= fmatch[ln->function_id];
			(*frames)[at++] = (struct stack_frame){name ? name : generated,
							       f ? f->file : "", ln->line, module};
		}
	}
	free(fmatch);
	return 0;
}

static int id_listed(const int64_t *ids, size_t n, const struct profile_sample *s, const char *key)
{
	if (!ids || !n)
		return 1;
	const struct profile_label *l = profile_sample_label(s, key);
	if (!l || l->str)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == l->num)
			return 1;
	return 0;
}

static int comm_listed(const struct stack_filter *filter, const struct profile_sample *s)
{
	if (!filter->comms)
		return 1;
	const struct profile_label *l = profile_sample_label(s, "comm");
	for (size_t i = 0; l && l->str && i < filter->ncomms; i++)
		if (strcmp(l->str, filter->comms[i]) == 0)
			return 1;
	return 0;
}

/* Whether label l holds value (the text after KEY=). */
static int label_is(const struct profile_label *l, const char *value)
{
	char num[32];

	if (l->str)
		return strcmp(l->str, value) == 0;
	snprintf(num, sizeof(num), "%lld", (long long)l->num);
	return strcmp(num, value) == 0;
}

/* Whether s has, for every key of the tags, one of its values. */
static int tags_match(const struct stack_filter *filter, const struct profile_sample *s)
{
	for (size_t i = 0; i < filter->ntags; i++) {
		const char *eq = strchr(filter->tags[i], '=');
		size_t klen = eq ? (size_t)(eq - filter->tags[i]) : strlen(filter->tags[i]);
		int ok = 0;
		for (size_t j = 0; j < filter->ntags && !ok; j++) {
			const char *t = filter->tags[j];
			if (strncmp(t, filter->tags[i], klen) != 0 || t[klen] != '=')
				continue;
			for (size_t k = 0; k < s->nlabels && !ok; k++) {
				const struct profile_label *l = &s->labels[k];
				ok = strlen(l->key) == klen && strncmp(l->key, t, klen) == 0 &&
				     label_is(l, t + klen + 1);
			}
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* Whether the filters keep s. */
static int sample_kept(const struct stack_filter *filter, const struct loc_frames *info,
		       const struct profile_sample *s)
{
	if (!filter)
		return 1;
	if (!id_listed(filter->pids, filter->npids, s, "pid") ||
	    !id_listed(filter->tids, filter->ntids, s, "tid") || !comm_listed(filter, s) ||
	    !tags_match(filter, s))
		return 0;
	int match = 0;
	for (size_t i = 0; i < s->nlocations; i++)
		match |= info[s->location_ids[i] - 1].match;
	if (filter->focus && !(match & MATCH_FOCUS))
		return 0;
	return !(match & MATCH_IGNORE);
}

/* The root frame's name of s's process, "[COMM PID]", into buf (len
 * bytes, 0: only measured). Returns its length. */
static size_t root_name(const struct profile_sample *s, char *buf, size_t len)
{
	const struct profile_label *comm = profile_sample_label(s, "comm");
	const struct profile_label *pid = profile_sample_label(s, "pid");

	if (!comm || !comm->str || !comm->str[0])
		comm = profile_sample_label(s, "thread");
	const char *name = comm && comm->str && comm->str[0] ? comm->str : "?";
	int n = pid && !pid->str ? snprintf(buf, len, "[%s %lld]", name, (long long)pid->num)
				 : snprintf(buf, len, "[%s]", name);
	return n > 0 ? (size_t)n : 0;
}

/* The root frame's name of s's host, "[host NAME]" (its "host" label),
 * as root_name(). */
static size_t host_name(const struct profile_sample *s, char *buf, size_t len)
{
	const struct profile_label *host = profile_sample_label(s, "host");
	int n = snprintf(buf, len, "[host %s]", host && host->str ? host->str : "?");

	return n > 0 ? (size_t)n : 0;
}

typedef size_t (*root_namer)(const struct profile_sample *s, char *buf, size_t len);

/* The root frames filter asks for, outermost first (its host, then its
 * process), as their namers into fns; returns how many. */
static size_t root_namers(const struct stack_filter *filter, root_namer fns[2])
{
	size_t n = 0;

	if (filter && filter->host_roots)
		fns[n++] = host_name;
	if (filter && filter->process_roots)
		fns[n++] = root_name;
	return n;
}

static size_t sample_nframes(const struct loc_frames *info, const struct profile_sample *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nlocations; i++)
		n += info[s->location_ids[i] - 1].n;
	return n;
}

int stacks_from_profile(const struct profile *p, size_t value_index,
			const struct stack_filter *filter, struct stack_set *out)
{
	struct stack_frame *loc_frames = NULL;
	unsigned char *kept = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if (value_index >= p->nsample_types)
		return -EINVAL;
	out->type = p->sample_types[value_index].type;
	out->unit = p->sample_types[value_index].unit;

	struct loc_frames *info = calloc(p->nlocations + 1, sizeof(*info));
	kept = calloc(p->nsamples + 1, 1);
	if (!info || !kept) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = locations_build(p, filter, info, &loc_frames, out);
	if (ret)
		goto out_free;

	size_t nkept = 0, nframes = 0, roots_size = 1;
	root_namer roots[2];
	size_t nroots = root_namers(filter, roots);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		int64_t v = s->values[value_index];

		if (!v)
			continue;
		if (!sample_kept(filter, info, s)) {
			out->dropped = sat_add(out->dropped, v);
			continue;
		}
		kept[i] = 1;
		nkept++;
		nframes += sample_nframes(info, s);
		for (size_t k = 0; k < nroots; k++) {
			nframes++;
			roots_size += roots[k](s, NULL, 0) + 1;
		}
	}
	out->entries = calloc(nkept ? nkept : 1, sizeof(*out->entries));
	out->frame_pool = calloc(nframes ? nframes : 1, sizeof(*out->frame_pool));
	out->root_pool = malloc(roots_size);
	if (!out->entries || !out->frame_pool || !out->root_pool) {
		ret = -ENOMEM;
		goto out_free;
	}

	struct stack_frame *f = out->frame_pool;
	char *root = out->root_pool;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct stack_entry *e = &out->entries[out->n];

		if (!kept[i])
			continue;
		e->frames = f;
		for (size_t k = 0; k < nroots; k++) {
			size_t n = roots[k](s, root, roots_size);
			*f++ = (struct stack_frame){root, "", 0, ""};
			root += n + 1;
			roots_size -= n + 1;
		}
		/* location_ids run leaf first: walk them backwards for root first. */
		for (size_t j = s->nlocations; j-- > 0;) {
			const struct loc_frames *li = &info[s->location_ids[j] - 1];

			memcpy(f, &loc_frames[li->first], li->n * sizeof(*f));
			f += li->n;
		}
		e->nframes = (size_t)(f - e->frames);
		e->value = s->values[value_index];
		e->sample = s;
		out->total = sat_add(out->total, e->value);
		out->n++;
	}
out_free:
	free(info);
	free(kept);
	free(loc_frames);
	if (ret)
		stacks_release(out);
	return ret;
}

void stacks_release(struct stack_set *set)
{
	free(set->entries);
	free(set->frame_pool);
	free(set->name_pool);
	free(set->root_pool);
	memset(set, 0, sizeof(*set));
}

int stacks_timeline(const struct stack_set *set, const struct profile *p,
		    struct stack_event **events, size_t *n)
{
	struct timeline_event *ev;
	size_t nev, m = 0;
	int time_type = set->unit && strcmp(set->unit, "count") != 0;

	*events = NULL;
	*n = 0;
	if (!p->timeline)
		return -ENODATA;
	int ret = timeline_decode(p->timeline, p->timeline_len, p->nsamples, &ev, &nev);
	if (ret)
		return ret;
	/* sample index -> entry index + 1 */
	size_t *entry_of = calloc(p->nsamples + 1, sizeof(*entry_of));
	struct stack_event *out = malloc((nev ? nev : 1) * sizeof(*out));
	if (!entry_of || !out) {
		free(ev);
		free(entry_of);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->n; i++)
		entry_of[set->entries[i].sample - p->samples] = i + 1;
	for (size_t i = 0; i < nev; i++) {
		size_t e = entry_of[ev[i].index];
		if (!e)
			continue;
		out[m++] = (struct stack_event){e - 1, ev[i].time_ns, time_type ? ev[i].period : 1,
						ev[i].period};
	}
	free(ev);
	free(entry_of);
	*events = out;
	*n = m;
	return 0;
}

size_t stacks_nframes(const struct stack_set *set)
{
	if (!set->n)
		return 0;
	const struct stack_entry *last = &set->entries[set->n - 1];
	return (size_t)(last->frames - set->frame_pool) + last->nframes;
}

size_t stacks_frame_index(const struct stack_set *set, const struct stack_frame *f)
{
	return (size_t)(f - set->frame_pool);
}

int64_t stacks_entry_num(const struct stack_entry *e, const char *key, int64_t def)
{
	const struct profile_label *l = e->sample ? profile_sample_label(e->sample, key) : NULL;

	return l && !l->str ? l->num : def;
}

static uint64_t function_hash(const struct stack_frame *f)
{
	/* Over name, NUL, file. */
	uint64_t h = hash_fnv1a_str(HASH_FNV1A_INIT, f->name ? f->name : "");

	return hash_fnv1a_str(hash_fnv1a_value(h, 0), f->file ? f->file : "");
}

struct wanted_function {
	const struct stack_frame *f;
	const struct stack_frame **funcs; /* the functions so far, by id */
};

static int same_function(const void *ctx, uint64_t id)
{
	const struct wanted_function *w = ctx;
	const struct stack_frame *a = w->f, *b = w->funcs[id];
	const char *an = a->name ? a->name : "", *bn = b->name ? b->name : "";
	const char *af = a->file ? a->file : "", *bf = b->file ? b->file : "";

	return (an == bn || strcmp(an, bn) == 0) && (af == bf || strcmp(af, bf) == 0);
}

int stacks_function_ids(const struct stack_set *set, uint32_t **ids,
			const struct stack_frame ***funcs, size_t *nfuncs)
{
	size_t nframes = stacks_nframes(set), n = 0;
	struct htab seen; /* function hash -> id, an index in *funcs */
	struct wanted_function w;
	int rc = 0;

	htab_init(&seen);
	*ids = malloc((nframes ? nframes : 1) * sizeof(**ids));
	*funcs = w.funcs = malloc((nframes ? nframes : 1) * sizeof(**funcs));
	for (size_t k = 0; *ids && *funcs && k < nframes; k++) {
		uint64_t h;
		struct htab_slot *hit;

		w.f = &set->frame_pool[k];
		h = function_hash(w.f);
		hit = htab_find(&seen, h, same_function, &w);
		if (!hit && (hit = htab_add(&seen, h, n)) != NULL)
			w.funcs[n++] = w.f;
		if (!hit) {
			rc = -ENOMEM;
			break;
		}
		(*ids)[k] = (uint32_t)hit->val;
	}
	htab_release(&seen);
	if (rc < 0 || !*ids || !*funcs) {
		free(*ids);
		free(*funcs);
		*ids = NULL;
		*funcs = NULL;
		return -ENOMEM;
	}
	*nfuncs = n;
	return 0;
}

int stacks_diff_merge(const struct stack_set *before, const struct stack_set *after,
		      struct stack_set *out)
{
	memset(out, 0, sizeof(*out));
	out->entries = calloc(before->n + after->n + 1, sizeof(*out->entries));
	if (!out->entries)
		return -ENOMEM;
	for (size_t i = 0; i < after->n; i++) {
		out->entries[out->n] = after->entries[i];
		out->entries[out->n++].base = 0;
	}
	for (size_t i = 0; i < before->n; i++) {
		out->entries[out->n] = before->entries[i];
		out->entries[out->n].base = before->entries[i].value;
		out->entries[out->n++].value = 0;
	}
	out->total = after->total;
	out->type = after->type;
	out->unit = after->unit;
	return 0;
}
