/*
 * pprof encoding (see pprof.h). The encoder builds protobuf-c messages
 * that point into the profile's own arrays, so nothing is copied but the
 * string table's index. Decoding is in pprof-read.c.
 */
#include "profile/pprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/pprof-pb.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htab.h"
#include "util/outfile.h"

/*
 * The string table under construction: strings are found by content, not
 * by pointer, because a caller may have set a field of the profile (say
 * period_type) to a string that was never interned.
 */
struct strtab {
	char **strs; /* index -> string; the protobuf's string_table */
	size_t n, cap;
	struct htab index; /* string hash -> index in strs */
	int err;
};

struct wanted_str {
	const struct strtab *t;
	const char *s;
};

static int same_str(const void *ctx, uint64_t index)
{
	const struct wanted_str *w = ctx;

	return strcmp(w->t->strs[index], w->s) == 0;
}

/* The index of s (NULL counts as ""), added if new. On allocation failure
 * sets t->err and returns 0, so callers check once at the end. */
static int64_t strtab_index(struct strtab *t, const char *s)
{
	if (!s || !*s)
		return 0;
	if (t->err)
		return 0;
	uint64_t h = hash_fnv1a_str(HASH_FNV1A_INIT, s);
	struct wanted_str w = {t, s};
	struct htab_slot *hit = htab_find(&t->index, h, same_str, &w);
	if (hit)
		return (int64_t)hit->val;
	char **n = array_reserve(t->strs, &t->cap, t->n + 1, sizeof(*t->strs));
	if (!n || !htab_add(&t->index, h, t->n)) {
		if (n)
			t->strs = n;
		t->err = -ENOMEM;
		return 0;
	}
	t->strs = n;
	/* The message only reads the strings; protobuf-c wants char *. */
	t->strs[t->n] = (char *)s;
	return (int64_t)t->n++;
}

static int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	htab_init(&t->index);
	t->strs = array_reserve(NULL, &t->cap, 1024, sizeof(*t->strs));
	if (!t->strs)
		return -ENOMEM;
	t->strs[t->n++] = "";
	return 0;
}

static void strtab_release(struct strtab *t)
{
	free(t->strs);
	htab_release(&t->index);
}

/* Every array the encoder allocates, freed together by encoder_release(). */
struct encoder {
	pb_profile msg;
	struct strtab strings;
	pb_value_type *types, period_type;
	pb_value_type **type_ptrs;
	pb_sample *samples, **sample_ptrs;
	pb_label *labels, **label_ptrs;
	pb_mapping *mappings, **mapping_ptrs;
	pb_location *locations, **location_ptrs;
	pb_line *lines, **line_ptrs;
	pb_function *functions, **function_ptrs;
	int64_t *comments;
	ProtobufCMessageUnknownField timeline;
};

static void encoder_release(struct encoder *e)
{
	strtab_release(&e->strings);
	free(e->types);
	free(e->type_ptrs);
	free(e->samples);
	free(e->sample_ptrs);
	free(e->labels);
	free(e->label_ptrs);
	free(e->mappings);
	free(e->mapping_ptrs);
	free(e->locations);
	free(e->location_ptrs);
	free(e->lines);
	free(e->line_ptrs);
	free(e->functions);
	free(e->function_ptrs);
	free(e->comments);
	free(e->timeline.data);
}

/* calloc of an array and of its array of pointers, at least one element
 * each so that NULL always means failure. */
static int alloc_pair(void **arr, void **ptrs, size_t n, size_t elem)
{
	*arr = calloc(n ? n : 1, elem);
	*ptrs = calloc(n ? n : 1, sizeof(void *));
	return *arr && *ptrs ? 0 : -ENOMEM;
}

static int encode_types(struct encoder *e, const struct profile *p)
{
	if (alloc_pair((void **)&e->types, (void **)&e->type_ptrs, p->nsample_types,
		       sizeof(*e->types)))
		return -ENOMEM;
	for (size_t i = 0; i < p->nsample_types; i++) {
		perftools__profiles__value_type__init(&e->types[i]);
		e->types[i].type = strtab_index(&e->strings, p->sample_types[i].type);
		e->types[i].unit = strtab_index(&e->strings, p->sample_types[i].unit);
		e->type_ptrs[i] = &e->types[i];
	}
	e->msg.n_sample_type = p->nsample_types;
	e->msg.sample_type = e->type_ptrs;
	if (p->default_sample_type < p->nsample_types)
		e->msg.default_sample_type =
		    strtab_index(&e->strings, p->sample_types[p->default_sample_type].type);
	perftools__profiles__value_type__init(&e->period_type);
	e->period_type.type = strtab_index(&e->strings, p->period_type.type);
	e->period_type.unit = strtab_index(&e->strings, p->period_type.unit);
	e->msg.period_type = &e->period_type;
	return 0;
}

static int encode_samples(struct encoder *e, const struct profile *p)
{
	size_t nlabels = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		nlabels += p->samples[i].nlabels;
	if (alloc_pair((void **)&e->samples, (void **)&e->sample_ptrs, p->nsamples,
		       sizeof(*e->samples)) ||
	    alloc_pair((void **)&e->labels, (void **)&e->label_ptrs, nlabels, sizeof(*e->labels)))
		return -ENOMEM;
	size_t l = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		pb_sample *m = &e->samples[i];

		perftools__profiles__sample__init(m);
		for (size_t j = 0; j < s->nlocations; j++)
			if (!profile_location(p, s->location_ids[j]))
				return -EINVAL;
		m->n_location_id = s->nlocations;
		m->location_id = s->location_ids;
		m->n_value = p->nsample_types;
		m->value = s->values;
		m->n_label = s->nlabels;
		m->label = &e->label_ptrs[l];
		for (size_t j = 0; j < s->nlabels; j++, l++) {
			const struct profile_label *sl = &s->labels[j];
			pb_label *ml = &e->labels[l];

			perftools__profiles__label__init(ml);
			ml->key = strtab_index(&e->strings, sl->key);
			if (sl->str)
				ml->str = strtab_index(&e->strings, sl->str);
			else
				ml->num = sl->num;
			ml->num_unit = strtab_index(&e->strings, sl->num_unit);
			e->label_ptrs[l] = ml;
		}
		e->sample_ptrs[i] = m;
	}
	e->msg.n_sample = p->nsamples;
	e->msg.sample = e->sample_ptrs;
	return 0;
}

static int encode_mappings(struct encoder *e, const struct profile *p)
{
	if (alloc_pair((void **)&e->mappings, (void **)&e->mapping_ptrs, p->nmappings,
		       sizeof(*e->mappings)))
		return -ENOMEM;
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct profile_mapping *pm = &p->mappings[i];
		pb_mapping *m = &e->mappings[i];

		perftools__profiles__mapping__init(m);
		m->id = pm->id;
		m->memory_start = pm->start;
		m->memory_limit = pm->limit;
		m->file_offset = pm->offset;
		m->filename = strtab_index(&e->strings, pm->file);
		m->build_id = strtab_index(&e->strings, pm->build_id);
		m->has_functions = !!pm->has_functions;
		m->has_filenames = !!pm->has_filenames;
		m->has_line_numbers = !!pm->has_line_numbers;
		m->has_inline_frames = !!pm->has_inline_frames;
		e->mapping_ptrs[i] = m;
	}
	e->msg.n_mapping = p->nmappings;
	e->msg.mapping = e->mapping_ptrs;
	return 0;
}

static int encode_locations(struct encoder *e, const struct profile *p)
{
	size_t nlines = 0;

	for (size_t i = 0; i < p->nlocations; i++)
		nlines += p->locations[i].nlines;
	if (alloc_pair((void **)&e->locations, (void **)&e->location_ptrs, p->nlocations,
		       sizeof(*e->locations)) ||
	    alloc_pair((void **)&e->lines, (void **)&e->line_ptrs, nlines, sizeof(*e->lines)))
		return -ENOMEM;
	size_t l = 0;
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *pl = &p->locations[i];
		pb_location *m = &e->locations[i];

		if (pl->mapping_id && !profile_mapping(p, pl->mapping_id))
			return -EINVAL;
		perftools__profiles__location__init(m);
		m->id = pl->id;
		m->mapping_id = pl->mapping_id;
		m->address = pl->address;
		m->n_line = pl->nlines;
		m->line = &e->line_ptrs[l];
		for (size_t j = 0; j < pl->nlines; j++, l++) {
			if (pl->lines[j].function_id &&
			    !profile_function(p, pl->lines[j].function_id))
				return -EINVAL;
			perftools__profiles__line__init(&e->lines[l]);
			e->lines[l].function_id = pl->lines[j].function_id;
			e->lines[l].line = pl->lines[j].line;
			e->line_ptrs[l] = &e->lines[l];
		}
		e->location_ptrs[i] = m;
	}
	e->msg.n_location = p->nlocations;
	e->msg.location = e->location_ptrs;
	return 0;
}

static int encode_functions(struct encoder *e, const struct profile *p)
{
	if (alloc_pair((void **)&e->functions, (void **)&e->function_ptrs, p->nfunctions,
		       sizeof(*e->functions)))
		return -ENOMEM;
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct profile_function *pf = &p->functions[i];
		pb_function *m = &e->functions[i];

		perftools__profiles__function__init(m);
		m->id = pf->id;
		m->name = strtab_index(&e->strings, pf->name);
		m->system_name = strtab_index(&e->strings, pf->system_name);
		m->filename = strtab_index(&e->strings, pf->file);
		m->start_line = pf->start_line;
		e->function_ptrs[i] = m;
	}
	e->msg.n_function = p->nfunctions;
	e->msg.function = e->function_ptrs;
	return 0;
}

/*
 * The timeline goes in field PPROF_TIMELINE_FIELD, which profile.proto
 * does not define: protobuf-c packs it as an unknown field, and readers
 * that do not know it skip it, as protobuf readers must. protobuf-c keeps
 * a length-delimited unknown field with its length prefix in data.
 */
static int encode_timeline(struct encoder *e, const struct profile *p)
{
	unsigned char prefix[10];
	size_t n = 0;
	uint64_t v = p->timeline_len;

	if (!p->timeline)
		return 0;
	while (v >= 0x80) {
		prefix[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	prefix[n++] = (unsigned char)v;
	e->timeline.data = malloc(n + p->timeline_len);
	if (!e->timeline.data)
		return -ENOMEM;
	memcpy(e->timeline.data, prefix, n);
	memcpy(e->timeline.data + n, p->timeline, p->timeline_len);
	e->timeline.len = n + p->timeline_len;
	e->timeline.tag = PPROF_TIMELINE_FIELD;
	e->timeline.wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
	e->msg.base.n_unknown_fields = 1;
	e->msg.base.unknown_fields = &e->timeline;
	return 0;
}

static int encode_header(struct encoder *e, const struct profile *p)
{
	e->comments = calloc(p->ncomments ? p->ncomments : 1, sizeof(*e->comments));
	if (!e->comments)
		return -ENOMEM;
	for (size_t i = 0; i < p->ncomments; i++)
		e->comments[i] = strtab_index(&e->strings, p->comments[i]);
	e->msg.n_comment = p->ncomments;
	e->msg.comment = e->comments;
	e->msg.drop_frames = strtab_index(&e->strings, p->drop_frames);
	e->msg.keep_frames = strtab_index(&e->strings, p->keep_frames);
	e->msg.time_nanos = p->time_nanos;
	e->msg.duration_nanos = p->duration_nanos;
	e->msg.period = p->period;
	return encode_timeline(e, p);
}

/* Gzip-compresses in[0..n) into a new heap buffer. */
static int gzip_compress(const void *in, size_t n, void **out, size_t *outlen)
{
	z_stream zs = {0};

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	/* deflateBound() leaves no room for the gzip header and trailer. */
	size_t cap = deflateBound(&zs, n) + 64;
	unsigned char *buf = malloc(cap);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (unsigned char *)in;
	zs.next_out = buf;
	int ret = Z_OK;
	/* avail_in and avail_out are 32-bit: feed large buffers in pieces. */
	while (ret == Z_OK) {
		size_t in_left =
		    n - (size_t)((const unsigned char *)zs.next_in - (const unsigned char *)in);
		size_t out_left = cap - (size_t)(zs.next_out - buf);
		zs.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
		zs.avail_out = out_left > UINT32_MAX ? UINT32_MAX : (uInt)out_left;
		ret = deflate(&zs, zs.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH);
	}
	*outlen = (size_t)(zs.next_out - buf);
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(buf);
		return ret == Z_MEM_ERROR ? -ENOMEM : -EIO;
	}
	*out = buf;
	return 0;
}

int pprof_encode(const struct profile *p, int gzip, void **buf, size_t *len)
{
	struct encoder e = {0};
	uint8_t *raw = NULL;
	int ret;

	perftools__profiles__profile__init(&e.msg);
	ret = strtab_init(&e.strings);
	if (!ret)
		ret = encode_types(&e, p);
	if (!ret)
		ret = encode_samples(&e, p);
	if (!ret)
		ret = encode_mappings(&e, p);
	if (!ret)
		ret = encode_locations(&e, p);
	if (!ret)
		ret = encode_functions(&e, p);
	if (!ret)
		ret = encode_header(&e, p);
	if (!ret)
		ret = e.strings.err;
	if (ret)
		goto out_release;
	e.msg.n_string_table = e.strings.n;
	e.msg.string_table = e.strings.strs;

	size_t n = perftools__profiles__profile__get_packed_size(&e.msg);
	raw = malloc(n ? n : 1);
	if (!raw) {
		ret = -ENOMEM;
		goto out_release;
	}
	perftools__profiles__profile__pack(&e.msg, raw);
	if (gzip) {
		ret = gzip_compress(raw, n, buf, len);
		free(raw);
	} else {
		*buf = raw;
		*len = n;
	}
out_release:
	encoder_release(&e);
	return ret;
}

struct encoded {
	const void *buf;
	size_t len;
};

static int write_encoded(FILE *fp, const void *arg)
{
	const struct encoded *e = arg;

	if (fwrite(e->buf, 1, e->len, fp) != e->len)
		return errno ? -errno : -EIO;
	return 0;
}

int pprof_write_file_or_elsewhere(const struct profile *p, const char *path, char *where,
				  size_t cap)
{
	void *buf = NULL;
	size_t len = 0;
	int ret = pprof_encode(p, 1, &buf, &len);

	if (where && cap)
		where[0] = 0;
	if (ret)
		return ret;
	struct encoded e = {buf, len};
	ret = outfile_write(path, write_encoded, &e);
	if (ret && where && cap && outfile_disk_error(ret) &&
	    outfile_write_elsewhere(path, write_encoded, &e, where, cap) != 0)
		where[0] = 0;
	free(buf);
	return ret;
}

int pprof_write_file(const struct profile *p, const char *path)
{
	return pprof_write_file_or_elsewhere(p, path, NULL, 0);
}

int pprof_check_writable(const char *path)
{
	return outfile_check(path);
}
