/*
 * pprof encoding and decoding (see pprof.h). The encoder builds protobuf-c
 * messages that point into the profile's own arrays, so nothing is copied
 * but the string table's index; the decoder checks every reference of the
 * unpacked message before it adds anything to the model, and builds the
 * model only through profile_add_*(), so a decoded profile holds the same
 * invariants as one that recce recorded.
 */
#include "profile/pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "profile/timeline.h"
#include "util/hash.h"
#include "util/outfile.h"
#include "util/readall.h"
#include "util/u64map.h"

typedef Perftools__Profiles__Profile pb_profile; /* protobuf-c's names are long */
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/*
 * The string table under construction: strings are found by content, not
 * by pointer, because a caller may have set a field of the profile (say
 * period_type) to a string that was never interned.
 */
struct strtab {
	char **strs; /* index -> string; the protobuf's string_table */
	size_t n, cap;
	uint32_t *slots; /* open addressing: index + 1, 0 = empty */
	size_t nslots;
	int err;
};

static uint64_t str_hash(const char *s)
{
	return hash_fnv1a_str(HASH_FNV1A_INIT, s);
}

static int strtab_rehash(struct strtab *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = str_hash(t->strs[i]) & (nslots - 1);
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* The index of s (NULL counts as ""), added if new. On allocation failure
 * sets t->err and returns 0, so callers check once at the end. */
static int64_t strtab_index(struct strtab *t, const char *s)
{
	if (!s || !*s)
		return 0;
	if (t->err)
		return 0;
	if ((t->n + 1) * 2 > t->nslots && strtab_rehash(t, t->nslots ? t->nslots * 2 : 1024) < 0)
		goto out_nomem;
	size_t mask = t->nslots - 1;
	size_t j = str_hash(s) & mask;
	while (t->slots[j]) {
		if (strcmp(t->strs[t->slots[j] - 1], s) == 0)
			return t->slots[j] - 1;
		j = (j + 1) & mask;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		char **n = realloc(t->strs, ncap * sizeof(*n));
		if (!n)
			goto out_nomem;
		t->strs = n;
		t->cap = ncap;
	}
	/* The message only reads the strings; protobuf-c wants char *. */
	t->strs[t->n] = (char *)s;
	t->slots[j] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;

out_nomem:
	t->err = -ENOMEM;
	return 0;
}

static int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->strs = malloc(1024 * sizeof(*t->strs));
	if (!t->strs)
		return -ENOMEM;
	t->cap = 1024;
	t->strs[t->n++] = "";
	return 0;
}

static void strtab_release(struct strtab *t)
{
	free(t->strs);
	free(t->slots);
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

int pprof_write_file(const struct profile *p, const char *path)
{
	struct outfile o;
	void *buf = NULL;
	size_t len = 0;
	int ret = pprof_encode(p, 1, &buf, &len);

	if (ret)
		return ret;
	ret = outfile_open(&o, path);
	if (ret)
		goto out_free;
	if (fwrite(buf, 1, len, o.fp) != len) {
		ret = errno ? -errno : -EIO;
		outfile_abort(&o);
		goto out_free;
	}
	ret = outfile_commit(&o);
out_free:
	free(buf);
	return ret;
}

int pprof_check_writable(const char *path)
{
	return outfile_check(path);
}

/* Decoding. */

/* The reason of the first failure; returns -EBADMSG for `return bad(...)`. */
__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* Inflates a gzip file (one or more members) into a new heap buffer. */
static int gzip_decompress(const unsigned char *in, size_t n, unsigned char **out, size_t *outlen,
			   char *why, size_t whylen)
{
	z_stream zs = {0};
	size_t cap = n < 16384 ? 65536 : n * 4;
	unsigned char *buf = NULL;
	int ret;

	if (n > UINT32_MAX)
		return -EFBIG;
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	size_t used = 0;
	for (;;) {
		if (used == cap || !buf) {
			size_t ncap = buf ? cap * 2 : cap;

			if (ncap > PPROF_MAX_BYTES)
				ncap = PPROF_MAX_BYTES;
			if (buf && ncap == cap) {
				ret = -EFBIG;
				goto out_end;
			}
			unsigned char *nb = realloc(buf, ncap);
			if (!nb) {
				ret = -ENOMEM;
				goto out_end;
			}
			buf = nb;
			cap = ncap;
		}
		zs.next_out = buf + used;
		zs.avail_out = (uInt)(cap - used);
		int z = inflate(&zs, Z_NO_FLUSH);
		used = cap - zs.avail_out;
		if (z == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			ret = bad(why, whylen, "%u bytes of garbage after the gzip stream",
				  zs.avail_in);
			goto out_end;
		}
		if (z == Z_MEM_ERROR) {
			ret = -ENOMEM;
			goto out_end;
		}
		if (z == Z_DATA_ERROR || z == Z_NEED_DICT) {
			ret = bad(why, whylen, "corrupt gzip stream (%s)",
				  zs.msg ? zs.msg : "bad data");
			goto out_end;
		}
		if (z == Z_BUF_ERROR && zs.avail_in == 0) {
			ret = bad(why, whylen, "truncated gzip stream");
			goto out_end;
		}
	}
	inflateEnd(&zs);
	*out = buf;
	*outlen = used;
	return 0;

out_end:
	inflateEnd(&zs);
	free(buf);
	return ret;
}

struct decoder {
	const pb_profile *msg;
	struct profile *p;
	struct u64map mappings, functions, locations; /* file id -> model id */
	char *why;
	size_t whylen;
};

#define NO_NUMBER UINT64_MAX

/* Fetches string idx into *s. what and which (NO_NUMBER for none) name the
 * object in the message, as in "function 12" or "the period type". */
static int dec_string(struct decoder *d, int64_t idx, const char **s, const char *what,
		      uint64_t which)
{
	char number[32] = "";

	if (idx >= 0 && (uint64_t)idx < d->msg->n_string_table) {
		*s = d->msg->string_table[idx];
		return 0;
	}
	if (which != NO_NUMBER)
		snprintf(number, sizeof(number), " %llu", (unsigned long long)which);
	return bad(d->why, d->whylen,
		   "%s%s has string index %lld, beyond the string table's %zu entries", what,
		   number, (long long)idx, d->msg->n_string_table);
}

/* Records that the object the file calls old is new_id in the model. */
static int dec_map_add(struct decoder *d, struct u64map *m, uint64_t old, uint64_t new_id,
		       const char *what)
{
	if (!new_id)
		return -ENOMEM;
	if (!old)
		return bad(d->why, d->whylen, "%s %zu has id 0", what, u64map_count(m) + 1);
	if (u64map_get(m, old, NULL))
		return bad(d->why, d->whylen, "two %ss have id %llu", what,
			   (unsigned long long)old);
	return u64map_put(m, old, new_id);
}

/* The model id of the object the file calls old, or 0 if there is none. */
static uint64_t dec_map_find(const struct u64map *m, uint64_t old)
{
	uint64_t id = 0;

	u64map_get(m, old, &id);
	return id;
}

static int dec_types(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	struct profile_value_type *types = calloc(msg->n_sample_type + 1, sizeof(*types));
	const char *def = "";
	int ret = 0;

	if (!types)
		return -ENOMEM;
	for (size_t i = 0; i < msg->n_sample_type && !ret; i++) {
		ret = dec_string(d, msg->sample_type[i]->type, &types[i].type, "sample type", i);
		if (!ret)
			ret = dec_string(d, msg->sample_type[i]->unit, &types[i].unit,
					 "sample type", i);
	}
	if (!ret)
		ret = profile_set_sample_types(d->p, types, msg->n_sample_type);
	free(types);
	if (!ret)
		ret = dec_string(d, msg->default_sample_type, &def, "the default sample type",
				 NO_NUMBER);
	if (ret)
		return ret;
	/* pprof: "If unset, clients should default to the last sample value." */
	int idx = *def ? profile_sample_type_index(d->p, def) : -1;
	if (idx < 0 && msg->n_sample_type)
		idx = (int)msg->n_sample_type - 1;
	d->p->default_sample_type = idx < 0 ? 0 : (size_t)idx;
	if (msg->period_type) {
		ret = dec_string(d, msg->period_type->type, &def, "the period type", NO_NUMBER);
		if (!ret)
			d->p->period_type.type = profile_intern(d->p, def);
		if (!ret)
			ret = dec_string(d, msg->period_type->unit, &def, "the period type",
					 NO_NUMBER);
		if (!ret)
			d->p->period_type.unit = profile_intern(d->p, def);
		if (!ret && (!d->p->period_type.type || !d->p->period_type.unit))
			ret = -ENOMEM;
	}
	return ret;
}

static int dec_mappings(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	int ret = 0;

	for (size_t i = 0; i < msg->n_mapping && !ret; i++) {
		const pb_mapping *m = msg->mapping[i];
		const char *file, *build_id;

		ret = dec_string(d, m->filename, &file, "mapping", m->id);
		if (!ret)
			ret = dec_string(d, m->build_id, &build_id, "mapping", m->id);
		if (ret)
			break;
		uint64_t id = profile_add_mapping(d->p, m->memory_start, m->memory_limit,
						  m->file_offset, file, build_id);
		ret = dec_map_add(d, &d->mappings, m->id, id, "mapping");
		if (ret)
			break;
		struct profile_mapping *pm = &d->p->mappings[id - 1];
		pm->has_functions = m->has_functions;
		pm->has_filenames = m->has_filenames;
		pm->has_line_numbers = m->has_line_numbers;
		pm->has_inline_frames = m->has_inline_frames;
	}
	return ret;
}

static int dec_functions(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	int ret = 0;

	for (size_t i = 0; i < msg->n_function && !ret; i++) {
		const pb_function *f = msg->function[i];
		const char *name, *system_name, *file;

		ret = dec_string(d, f->name, &name, "function", f->id);
		if (!ret)
			ret = dec_string(d, f->system_name, &system_name, "function", f->id);
		if (!ret)
			ret = dec_string(d, f->filename, &file, "function", f->id);
		if (ret)
			break;
		uint64_t id = profile_add_function(d->p, name, system_name, file, f->start_line);
		ret = dec_map_add(d, &d->functions, f->id, id, "function");
	}
	return ret;
}

static int dec_locations(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	size_t maxlines = 1;

	for (size_t i = 0; i < msg->n_location; i++)
		if (msg->location[i]->n_line > maxlines)
			maxlines = msg->location[i]->n_line;
	struct profile_line *lines = calloc(maxlines, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < msg->n_location && !ret; i++) {
		const pb_location *l = msg->location[i];
		uint64_t mapping = 0;

		if (l->mapping_id && !(mapping = dec_map_find(&d->mappings, l->mapping_id))) {
			ret = bad(d->why, d->whylen,
				  "location %llu names mapping %llu, which does not exist",
				  (unsigned long long)l->id, (unsigned long long)l->mapping_id);
			break;
		}
		for (size_t j = 0; j < l->n_line; j++) {
			uint64_t fid = l->line[j]->function_id;

			lines[j].function_id = fid ? dec_map_find(&d->functions, fid) : 0;
			lines[j].line = l->line[j]->line;
			if (fid && !lines[j].function_id) {
				ret = bad(d->why, d->whylen,
					  "location %llu names function %llu, which does not exist",
					  (unsigned long long)l->id, (unsigned long long)fid);
				break;
			}
		}
		if (ret)
			break;
		uint64_t id = profile_add_location(d->p, mapping, l->address, lines, l->n_line);
		ret = dec_map_add(d, &d->locations, l->id, id, "location");
	}
	free(lines);
	return ret;
}

static int dec_labels(struct decoder *d, const pb_sample *s, size_t i, struct profile_label *out)
{
	for (size_t j = 0; j < s->n_label; j++) {
		const pb_label *l = s->label[j];
		const char *str = NULL;
		int ret = dec_string(d, l->key, &out[j].key, "label of sample", i);

		if (!ret && l->str)
			ret = dec_string(d, l->str, &str, "label of sample", i);
		if (!ret)
			ret = dec_string(d, l->num_unit, &out[j].num_unit, "label of sample", i);
		if (ret)
			return ret;
		out[j].str = str;
		out[j].num = l->num;
	}
	return 0;
}

static int dec_samples(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	size_t maxlocs = 1, maxlabels = 1;
	int ret = 0;

	for (size_t i = 0; i < msg->n_sample; i++) {
		const pb_sample *s = msg->sample[i];

		if (s->n_value != msg->n_sample_type)
			return bad(d->why, d->whylen,
				   "sample %zu has %zu values for %zu sample types", i, s->n_value,
				   msg->n_sample_type);
		if (s->n_location_id > maxlocs)
			maxlocs = s->n_location_id;
		if (s->n_label > maxlabels)
			maxlabels = s->n_label;
	}
	uint64_t *locs = calloc(maxlocs, sizeof(*locs));
	struct profile_label *labels = calloc(maxlabels, sizeof(*labels));
	if (!locs || !labels)
		ret = -ENOMEM;
	for (size_t i = 0; i < msg->n_sample && !ret; i++) {
		const pb_sample *s = msg->sample[i];

		for (size_t j = 0; j < s->n_location_id && !ret; j++) {
			locs[j] = dec_map_find(&d->locations, s->location_id[j]);
			if (!locs[j])
				ret = bad(d->why, d->whylen,
					  "sample %zu names location %llu, which does not exist", i,
					  (unsigned long long)s->location_id[j]);
		}
		if (!ret)
			ret = dec_labels(d, s, i, labels);
		if (!ret)
			ret = profile_add_sample(d->p, locs, s->n_location_id, s->value, labels,
						 s->n_label);
	}
	free(locs);
	free(labels);
	return ret;
}

/* The timeline field (see encode_timeline()), checked against the samples
 * it indexes. The last one counts if a file has several, as for any
 * protobuf field that is not repeated. */
static int dec_timeline(struct decoder *d)
{
	const ProtobufCMessageUnknownField *f = NULL;
	struct timeline_event *ev;
	size_t n, at = 0;
	uint64_t len = 0;

	for (unsigned i = 0; i < d->msg->base.n_unknown_fields; i++)
		if (d->msg->base.unknown_fields[i].tag == PPROF_TIMELINE_FIELD)
			f = &d->msg->base.unknown_fields[i];
	if (!f)
		return 0;
	if (f->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
		return bad(d->why, d->whylen, "the timeline field is not bytes");
	for (unsigned shift = 0; at < f->len && shift < 64; shift += 7) {
		len |= (uint64_t)(f->data[at] & 0x7f) << shift;
		if (!(f->data[at++] & 0x80))
			break;
	}
	if (len != f->len - at)
		return bad(d->why, d->whylen, "the timeline field is truncated");
	int ret = timeline_decode(f->data + at, (size_t)len, d->p->nsamples, &ev, &n);
	if (ret == -EBADMSG)
		return bad(d->why, d->whylen, "the sample timeline is malformed");
	if (ret)
		return ret;
	free(ev);
	return profile_set_timeline(d->p, f->data + at, (size_t)len);
}

static int dec_header(struct decoder *d)
{
	const pb_profile *msg = d->msg;
	const char *s;
	int ret = 0;

	for (size_t i = 0; i < msg->n_comment && !ret; i++) {
		ret = dec_string(d, msg->comment[i], &s, "comment", i);
		if (!ret)
			ret = profile_add_comment(d->p, s);
	}
	if (!ret)
		ret = dec_string(d, msg->drop_frames, &s, "drop_frames", NO_NUMBER);
	if (!ret)
		d->p->drop_frames = profile_intern(d->p, s);
	if (!ret)
		ret = dec_string(d, msg->keep_frames, &s, "keep_frames", NO_NUMBER);
	if (!ret)
		d->p->keep_frames = profile_intern(d->p, s);
	if (!ret)
		ret = dec_string(d, msg->doc_url, &s, "doc_url", NO_NUMBER);
	if (!ret && (!d->p->drop_frames || !d->p->keep_frames))
		ret = -ENOMEM;
	d->p->time_nanos = msg->time_nanos;
	d->p->duration_nanos = msg->duration_nanos;
	d->p->period = msg->period;
	if (!ret)
		ret = dec_timeline(d);
	return ret;
}

static int dec_message(const void *data, size_t len, struct profile **out, char *why, size_t whylen)
{
	struct decoder d = {.why = why, .whylen = whylen};

	u64map_init(&d.mappings);
	u64map_init(&d.functions);
	u64map_init(&d.locations);
	pb_profile *msg = perftools__profiles__profile__unpack(NULL, len, data);
	int ret;

	/* protobuf-c does not tell a malformed message from a failed malloc;
	 * the input is far likelier to be at fault. */
	if (!msg)
		return bad(why, whylen, "not a pprof protobuf message (truncated or corrupt)");
	d.msg = msg;
	if (!msg->n_string_table || msg->string_table[0][0]) {
		ret = len ? bad(why, whylen, "the string table does not start with \"\"")
			  : bad(why, whylen, "empty profile");
		goto out_free;
	}
	d.p = profile_new();
	if (!d.p) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = dec_types(&d);
	if (!ret)
		ret = dec_mappings(&d);
	if (!ret)
		ret = dec_functions(&d);
	if (!ret)
		ret = dec_locations(&d);
	if (!ret)
		ret = dec_samples(&d);
	if (!ret)
		ret = dec_header(&d);
	if (ret) {
		profile_free(d.p);
		d.p = NULL;
	}
	*out = d.p;
out_free:
	u64map_release(&d.mappings);
	u64map_release(&d.functions);
	u64map_release(&d.locations);
	perftools__profiles__profile__free_unpacked(msg, NULL);
	return ret;
}

int pprof_decode(const void *buf, size_t len, struct profile **out, char *why, size_t whylen)
{
	const unsigned char *b = buf;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (len > PPROF_MAX_BYTES)
		return -EFBIG;
	if (len < 2 || b[0] != 0x1f || b[1] != 0x8b)
		return dec_message(buf, len, out, why, whylen);
	unsigned char *raw = NULL;
	size_t rawlen = 0;
	int ret = gzip_decompress(b, len, &raw, &rawlen, why, whylen);
	if (ret)
		return ret;
	ret = dec_message(raw, rawlen, out, why, whylen);
	free(raw);
	return ret;
}

int pprof_read_file(const char *path, struct profile **out, char *why, size_t whylen)
{
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = read_all(fd, PPROF_MAX_BYTES, &buf, &len);
	close(fd);
	if (ret)
		return ret;
	ret = pprof_decode(buf, len, out, why, whylen);
	free(buf);
	return ret;
}
