/*
 * pprof decoding (see pprof.h). The decoder walks the message in place
 * (see struct decoder), checks every reference of each element before it
 * adds anything to the model, and builds the
 * model only through profile_add_*(), so a decoded profile holds the same
 * invariants as one that recce recorded. Encoding is in pprof-write.c.
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

#include "profile/pb-wire.h"
#include "profile/pprof-pb.h"
#include "profile/timeline.h"
#include "util/array.h"
#include "util/readall.h"
#include "util/u64map.h"
#include "util/varint.h"

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

/*
 * Inflates a gzip file (one or more members) into out[cap] (NULL: into a
 * scratch buffer, only counting), setting *outlen. Returns 0, -EFBIG when
 * it fills cap or passes PPROF_MAX_BYTES (a gzip bomb), -ENOMEM, or
 * -EBADMSG with why.
 */
static int gzip_inflate(const unsigned char *in, size_t n, unsigned char *out, size_t cap,
			size_t *outlen, char *why, size_t whylen)
{
	unsigned char scratch[65536];
	z_stream zs = {0};
	size_t used = 0;
	int ret = 0;

	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	for (;;) {
		if (out) {
			zs.next_out = out + used;
			zs.avail_out = (uInt)(cap - used < UINT32_MAX ? cap - used : UINT32_MAX);
		} else {
			zs.next_out = scratch;
			zs.avail_out = sizeof(scratch);
		}
		uInt room = zs.avail_out;
		int z = inflate(&zs, Z_NO_FLUSH);
		used += room - zs.avail_out;
		if (used > PPROF_MAX_BYTES || (out && used == cap)) {
			if (why && whylen)
				snprintf(why, whylen,
					 "it inflates to more than %zu MiB (a gzip bomb?)",
					 PPROF_MAX_BYTES >> 20);
			ret = -EFBIG;
			break;
		}
		if (z == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			ret = bad(why, whylen, "%u bytes of garbage after the gzip stream",
				  zs.avail_in);
			break;
		}
		if (z == Z_MEM_ERROR) {
			ret = -ENOMEM;
			break;
		}
		if (z == Z_DATA_ERROR || z == Z_NEED_DICT) {
			ret = bad(why, whylen, "corrupt gzip stream (%s)",
				  zs.msg ? zs.msg : "bad data");
			break;
		}
		if (z == Z_BUF_ERROR && zs.avail_in == 0) {
			ret = bad(why, whylen, "truncated gzip stream");
			break;
		}
	}
	inflateEnd(&zs);
	*outlen = used;
	return ret;
}

/* Inflates a gzip file into a new heap buffer of its exact size: once
 * to count (a bomb is refused there, having taken no memory), then
 * into the buffer. */
static int gzip_decompress(const unsigned char *in, size_t n, unsigned char **out, size_t *outlen,
			   char *why, size_t whylen)
{
	size_t size, got;

	if (n > UINT32_MAX)
		return -EFBIG;
	int ret = gzip_inflate(in, n, NULL, 0, &size, why, whylen);
	if (ret < 0)
		return ret;
	/* A byte to spare: the stream's end is read with room left. */
	unsigned char *buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	ret = gzip_inflate(in, n, buf, size + 1, &got, why, whylen);
	if (ret < 0 || got != size) {
		free(buf);
		return ret < 0 ? ret : -EIO;
	}
	*out = buf;
	*outlen = size;
	return 0;
}

/* Field numbers of the Profile message (proto/profile.proto). */
enum {
	F_SAMPLE_TYPE = 1,
	F_SAMPLE,
	F_MAPPING,
	F_LOCATION,
	F_FUNCTION,
	F_STRING_TABLE,
	F_DROP_FRAMES,
	F_KEEP_FRAMES,
	F_TIME_NANOS,
	F_DURATION_NANOS,
	F_PERIOD_TYPE,
	F_PERIOD,
	F_COMMENT,
	F_DEFAULT_SAMPLE_TYPE,
	F_DOC_URL,
	F_LAST = F_DOC_URL,
};

/*
 * The message is walked in place (pb-wire.h): a first pass checks the
 * wire format and counts the elements of each field, so that a file with
 * more than recce reads is refused before anything is built; then each
 * kind of element is decoded in turn (types, mappings, functions,
 * locations, samples: each refers only to kinds before it), one element
 * at a time, unpacked by protobuf-c and freed at once. Memory follows
 * what the profile holds, not the count of protobuf objects in the file.
 */
struct decoder {
	const uint8_t *data;
	size_t len;
	size_t count[F_LAST + 1];	       /* elements of each field */
	int64_t scalar[F_LAST + 1];	       /* the last value of each varint field */
	struct pb_field period_type, timeline; /* the last ones; data NULL if none */
	char *strings;			       /* the string table, each NUL-terminated */
	uint32_t *string_at;		       /* where each string starts in strings */
	size_t nstrings, string_bytes;
	size_t ncomments;
	struct profile *p;
	struct u64map mappings, functions, locations; /* file id -> model id */
	struct profile_value_type *types;	      /* while they are decoded */
	uint64_t *ids;				      /* scratch: a sample's locations */
	size_t ids_cap;
	struct profile_label *labels; /* scratch: a sample's labels */
	size_t labels_cap;
	struct profile_line *lines; /* scratch: a location's lines */
	size_t lines_cap;
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

	if (idx >= 0 && (uint64_t)idx < d->nstrings) {
		*s = d->strings + d->string_at[idx];
		return 0;
	}
	if (which != NO_NUMBER)
		snprintf(number, sizeof(number), " %llu", (unsigned long long)which);
	return bad(d->why, d->whylen,
		   "%s%s has string index %lld, beyond the string table's %zu entries", what,
		   number, (long long)idx, d->nstrings);
}

/* Whether a field of the Profile message came with the wire type its
 * declaration gives it (comments may come packed or not). */
static int wire_ok(const struct pb_field *f)
{
	switch (f->num) {
	case F_SAMPLE_TYPE:
	case F_SAMPLE:
	case F_MAPPING:
	case F_LOCATION:
	case F_FUNCTION:
	case F_STRING_TABLE:
	case F_PERIOD_TYPE:
		return f->wire == PB_LEN;
	case F_COMMENT:
		return f->wire == PB_LEN || f->wire == PB_VARINT;
	default:
		return f->num > F_LAST || f->wire == PB_VARINT;
	}
}

/* The varints of a packed repeated field: their count, or -1. */
static long long packed_count(const struct pb_field *f)
{
	const uint8_t *at = f->data, *end = f->data + f->len;
	long long n = 0;
	uint64_t v;

	while (at < end)
		if (varint_read(&at, end, &v))
			return -1;
		else
			n++;
	return n;
}

/* The limits on what a file may hold (pprof.h), by field. */
static const struct {
	int field;
	size_t max;
	const char *what;
} caps[] = {
    {F_SAMPLE_TYPE, PPROF_MAX_SAMPLE_TYPES, "sample types"},
    {F_SAMPLE, PPROF_MAX_SAMPLES, "samples"},
    {F_MAPPING, PPROF_MAX_MAPPINGS, "mappings"},
    {F_LOCATION, PPROF_MAX_LOCATIONS, "locations"},
    {F_FUNCTION, PPROF_MAX_FUNCTIONS, "functions"},
    {F_STRING_TABLE, PPROF_MAX_STRINGS, "strings"},
    {F_COMMENT, PPROF_MAX_COMMENTS, "comments"},
};

/* The first pass: checks the wire format, counts, keeps the scalars. */
static int scan(struct decoder *d)
{
	struct pb_reader r = pb_reader(d->data, d->len);
	struct pb_field f;
	int rc;

	while ((rc = pb_next(&r, &f)) > 0) {
		if (f.num == PPROF_TIMELINE_FIELD) {
			if (f.wire != PB_LEN)
				return bad(d->why, d->whylen, "the timeline field is not bytes");
			d->timeline = f;
			continue;
		}
		if (!wire_ok(&f))
			return bad(d->why, d->whylen,
				   "field %u of the profile has the wrong wire type %u", f.num,
				   f.wire);
		if (f.num > F_LAST)
			continue; /* a field recce does not know: skipped, as protobuf does */
		if (f.num == F_COMMENT && f.wire == PB_LEN) {
			long long n = packed_count(&f);
			if (n < 0)
				return bad(d->why, d->whylen, "the comments are malformed");
			d->count[F_COMMENT] += (size_t)n;
			continue;
		}
		d->count[f.num]++;
		d->scalar[f.num] = (int64_t)f.value;
		if (f.num == F_STRING_TABLE)
			d->string_bytes += f.len + 1;
		if (f.num == F_PERIOD_TYPE)
			d->period_type = f;
	}
	if (rc < 0)
		return bad(d->why, d->whylen,
			   "not a pprof protobuf message (truncated or corrupt)");
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (d->count[caps[i].field] > caps[i].max)
			return bad(d->why, d->whylen, "it has %zu %s, more than recce reads (%zu)",
				   d->count[caps[i].field], caps[i].what, caps[i].max);
	return 0;
}

/* Copies the string table out of the message, each string NUL-terminated. */
static int dec_strings(struct decoder *d)
{
	struct pb_reader r = pb_reader(d->data, d->len);
	struct pb_field f;
	size_t at = 0;

	if (d->string_bytes > UINT32_MAX)
		return bad(d->why, d->whylen, "its string table is too large");
	d->strings = malloc(d->string_bytes ? d->string_bytes : 1);
	d->string_at = calloc(d->count[F_STRING_TABLE] + 1, sizeof(*d->string_at));
	if (!d->strings || !d->string_at)
		return -ENOMEM;
	while (pb_next(&r, &f) > 0) {
		if (f.num != F_STRING_TABLE)
			continue;
		d->string_at[d->nstrings++] = (uint32_t)at;
		memcpy(d->strings + at, f.data, f.len);
		at += f.len;
		d->strings[at++] = 0;
	}
	if (!d->nstrings || d->strings[0])
		return d->len ? bad(d->why, d->whylen, "the string table does not start with \"\"")
			      : bad(d->why, d->whylen, "empty profile");
	return 0;
}

/* Calls fn on each element of field num, in the order of the file. */
static int each(struct decoder *d, uint32_t num,
		int (*fn)(struct decoder *d, const uint8_t *data, size_t len, size_t i))
{
	struct pb_reader r = pb_reader(d->data, d->len);
	struct pb_field f;
	size_t i = 0;
	int ret = 0;

	while (!ret && pb_next(&r, &f) > 0)
		if (f.num == num)
			ret = fn(d, f.data, f.len, i++);
	return ret;
}

/* The message an element's bytes hold, or a message that says which. */
#define UNPACK(d, fn, data, len, what, i, out)                                                     \
	((out) = fn(NULL, (len), (data)),                                                          \
	 (out) ? 0 : bad((d)->why, (d)->whylen, "%s %zu is truncated or corrupt", (what), (i)))

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

/* A value type's two strings into *out. */
static int dec_value_type(struct decoder *d, const uint8_t *data, size_t len, const char *what,
			  uint64_t which, struct profile_value_type *out)
{
	pb_value_type *vt = perftools__profiles__value_type__unpack(NULL, len, data);

	if (!vt)
		return bad(d->why, d->whylen, "%s is truncated or corrupt", what);
	int ret = dec_string(d, vt->type, &out->type, what, which);
	if (!ret)
		ret = dec_string(d, vt->unit, &out->unit, what, which);
	perftools__profiles__value_type__free_unpacked(vt, NULL);
	return ret;
}

static int dec_sample_type(struct decoder *d, const uint8_t *data, size_t len, size_t i)
{
	return dec_value_type(d, data, len, "sample type", i, &d->types[i]);
}

static int dec_types(struct decoder *d)
{
	size_t n = d->count[F_SAMPLE_TYPE];
	const char *def = "";

	if (!(d->types = calloc(n + 1, sizeof(*d->types))))
		return -ENOMEM;
	int ret = each(d, F_SAMPLE_TYPE, dec_sample_type);
	if (!ret)
		ret = profile_set_sample_types(d->p, d->types, n);
	free(d->types);
	d->types = NULL;
	if (!ret)
		ret = dec_string(d, d->scalar[F_DEFAULT_SAMPLE_TYPE], &def,
				 "the default sample type", NO_NUMBER);
	if (ret)
		return ret;
	/* pprof: "If unset, clients should default to the last sample value." */
	int idx = *def ? profile_sample_type_index(d->p, def) : -1;
	if (idx < 0 && n)
		idx = (int)n - 1;
	d->p->default_sample_type = idx < 0 ? 0 : (size_t)idx;
	if (d->period_type.data) {
		struct profile_value_type pt;
		ret = dec_value_type(d, d->period_type.data, d->period_type.len, "the period type",
				     NO_NUMBER, &pt);
		if (!ret) {
			d->p->period_type.type = profile_intern(d->p, pt.type);
			d->p->period_type.unit = profile_intern(d->p, pt.unit);
			if (!d->p->period_type.type || !d->p->period_type.unit)
				ret = -ENOMEM;
		}
	}
	return ret;
}

static int dec_mapping(struct decoder *d, const uint8_t *data, size_t len, size_t i)
{
	pb_mapping *m;
	const char *file, *build_id;
	int ret = UNPACK(d, perftools__profiles__mapping__unpack, data, len, "mapping", i, m);

	if (ret)
		return ret;
	ret = dec_string(d, m->filename, &file, "mapping", m->id);
	if (!ret)
		ret = dec_string(d, m->build_id, &build_id, "mapping", m->id);
	if (!ret) {
		uint64_t id = profile_add_mapping(d->p, m->memory_start, m->memory_limit,
						  m->file_offset, file, build_id);
		ret = dec_map_add(d, &d->mappings, m->id, id, "mapping");
		if (!ret) {
			struct profile_mapping *pm = &d->p->mappings[id - 1];
			pm->has_functions = m->has_functions;
			pm->has_filenames = m->has_filenames;
			pm->has_line_numbers = m->has_line_numbers;
			pm->has_inline_frames = m->has_inline_frames;
		}
	}
	perftools__profiles__mapping__free_unpacked(m, NULL);
	return ret;
}

static int dec_function(struct decoder *d, const uint8_t *data, size_t len, size_t i)
{
	pb_function *f;
	const char *name, *system_name, *file;
	int ret = UNPACK(d, perftools__profiles__function__unpack, data, len, "function", i, f);

	if (ret)
		return ret;
	ret = dec_string(d, f->name, &name, "function", f->id);
	if (!ret)
		ret = dec_string(d, f->system_name, &system_name, "function", f->id);
	if (!ret)
		ret = dec_string(d, f->filename, &file, "function", f->id);
	if (!ret) {
		uint64_t id = profile_add_function(d->p, name, system_name, file, f->start_line);
		ret = dec_map_add(d, &d->functions, f->id, id, "function");
	}
	perftools__profiles__function__free_unpacked(f, NULL);
	return ret;
}

/* Makes the scratch array *v hold n elements of size elem. */
static int scratch(void *v, size_t *cap, size_t n, size_t elem)
{
	void *grown = array_reserve(*(void **)v, cap, n ? n : 1, elem);

	if (!grown)
		return -ENOMEM;
	*(void **)v = grown;
	return 0;
}

static int dec_location(struct decoder *d, const uint8_t *data, size_t len, size_t i)
{
	pb_location *l;
	uint64_t mapping = 0;
	int ret = UNPACK(d, perftools__profiles__location__unpack, data, len, "location", i, l);

	if (ret)
		return ret;
	if (l->mapping_id && !(mapping = dec_map_find(&d->mappings, l->mapping_id)))
		ret =
		    bad(d->why, d->whylen, "location %llu names mapping %llu, which does not exist",
			(unsigned long long)l->id, (unsigned long long)l->mapping_id);
	if (!ret)
		ret = scratch(&d->lines, &d->lines_cap, l->n_line, sizeof(*d->lines));
	for (size_t j = 0; !ret && j < l->n_line; j++) {
		uint64_t fid = l->line[j]->function_id;

		d->lines[j].function_id = fid ? dec_map_find(&d->functions, fid) : 0;
		d->lines[j].line = l->line[j]->line;
		if (fid && !d->lines[j].function_id)
			ret = bad(d->why, d->whylen,
				  "location %llu names function %llu, which does not exist",
				  (unsigned long long)l->id, (unsigned long long)fid);
	}
	if (!ret) {
		uint64_t id = profile_add_location(d->p, mapping, l->address, d->lines, l->n_line);
		ret = dec_map_add(d, &d->locations, l->id, id, "location");
	}
	perftools__profiles__location__free_unpacked(l, NULL);
	return ret;
}

static int dec_labels(struct decoder *d, const pb_sample *s, size_t i)
{
	int ret = scratch(&d->labels, &d->labels_cap, s->n_label, sizeof(*d->labels));

	for (size_t j = 0; !ret && j < s->n_label; j++) {
		const pb_label *l = s->label[j];
		struct profile_label *out = &d->labels[j];
		const char *str = NULL;

		ret = dec_string(d, l->key, &out->key, "label of sample", i);
		if (!ret && l->str)
			ret = dec_string(d, l->str, &str, "label of sample", i);
		if (!ret)
			ret = dec_string(d, l->num_unit, &out->num_unit, "label of sample", i);
		out->str = str;
		out->num = l->num;
	}
	return ret;
}

static int dec_sample(struct decoder *d, const uint8_t *data, size_t len, size_t i)
{
	pb_sample *s;
	int ret = UNPACK(d, perftools__profiles__sample__unpack, data, len, "sample", i, s);

	if (ret)
		return ret;
	if (s->n_value != d->count[F_SAMPLE_TYPE])
		ret = bad(d->why, d->whylen, "sample %zu has %zu values for %zu sample types", i,
			  s->n_value, d->count[F_SAMPLE_TYPE]);
	if (!ret)
		ret = scratch(&d->ids, &d->ids_cap, s->n_location_id, sizeof(*d->ids));
	for (size_t j = 0; !ret && j < s->n_location_id; j++) {
		d->ids[j] = dec_map_find(&d->locations, s->location_id[j]);
		if (!d->ids[j])
			ret = bad(d->why, d->whylen,
				  "sample %zu names location %llu, which does not exist", i,
				  (unsigned long long)s->location_id[j]);
	}
	if (!ret)
		ret = dec_labels(d, s, i);
	if (!ret)
		ret = profile_add_sample(d->p, d->ids, s->n_location_id, s->value, d->labels,
					 s->n_label);
	perftools__profiles__sample__free_unpacked(s, NULL);
	return ret;
}

/* The timeline field (see encode_timeline()), checked against the samples
 * it indexes. The last one counts if a file has several, as for any
 * protobuf field that is not repeated. */
static int dec_timeline(struct decoder *d)
{
	struct timeline_event *ev;
	size_t n;

	if (!d->timeline.data)
		return 0;
	int ret = timeline_decode(d->timeline.data, d->timeline.len, d->p->nsamples, &ev, &n);
	if (ret == -EBADMSG)
		return bad(d->why, d->whylen, "the sample timeline is malformed");
	if (ret)
		return ret;
	free(ev);
	return profile_set_timeline(d->p, d->timeline.data, d->timeline.len);
}

/* A comment (a string index) into the profile. */
static int dec_comment(struct decoder *d, uint64_t idx, size_t i)
{
	const char *s;
	int ret = dec_string(d, (int64_t)idx, &s, "comment", i);

	return ret ? ret : profile_add_comment(d->p, s);
}

static int dec_comments(struct decoder *d)
{
	struct pb_reader r = pb_reader(d->data, d->len);
	struct pb_field f;
	size_t i = 0;
	int ret = 0;

	while (!ret && pb_next(&r, &f) > 0) {
		if (f.num != F_COMMENT)
			continue;
		if (f.wire == PB_VARINT) {
			ret = dec_comment(d, f.value, i++);
			continue;
		}
		const uint8_t *at = f.data;
		uint64_t v;
		while (!ret && at < f.data + f.len && varint_read(&at, f.data + f.len, &v) == 0)
			ret = dec_comment(d, v, i++);
	}
	return ret;
}

static int dec_header(struct decoder *d)
{
	const char *s;
	int ret = dec_comments(d);

	if (!ret)
		ret = dec_string(d, d->scalar[F_DROP_FRAMES], &s, "drop_frames", NO_NUMBER);
	if (!ret)
		d->p->drop_frames = profile_intern(d->p, s);
	if (!ret)
		ret = dec_string(d, d->scalar[F_KEEP_FRAMES], &s, "keep_frames", NO_NUMBER);
	if (!ret)
		d->p->keep_frames = profile_intern(d->p, s);
	if (!ret)
		ret = dec_string(d, d->scalar[F_DOC_URL], &s, "doc_url", NO_NUMBER);
	if (!ret && (!d->p->drop_frames || !d->p->keep_frames))
		ret = -ENOMEM;
	d->p->time_nanos = d->scalar[F_TIME_NANOS];
	d->p->duration_nanos = d->scalar[F_DURATION_NANOS];
	d->p->period = d->scalar[F_PERIOD];
	if (!ret)
		ret = dec_timeline(d);
	return ret;
}

static int dec_message(const void *data, size_t len, struct profile **out, char *why, size_t whylen)
{
	struct decoder d = {.data = data, .len = len, .why = why, .whylen = whylen};

	u64map_init(&d.mappings);
	u64map_init(&d.functions);
	u64map_init(&d.locations);
	int ret = scan(&d);
	if (!ret)
		ret = dec_strings(&d);
	if (!ret && !(d.p = profile_new()))
		ret = -ENOMEM;
	if (!ret)
		ret = profile_reserve_samples(d.p, d.count[F_SAMPLE]);
	if (!ret)
		ret = dec_types(&d);
	if (!ret)
		ret = each(&d, F_MAPPING, dec_mapping);
	if (!ret)
		ret = each(&d, F_FUNCTION, dec_function);
	if (!ret)
		ret = each(&d, F_LOCATION, dec_location);
	if (!ret)
		ret = each(&d, F_SAMPLE, dec_sample);
	if (!ret)
		ret = dec_header(&d);
	if (ret) {
		profile_free(d.p);
		d.p = NULL;
	}
	*out = d.p;
	u64map_release(&d.mappings);
	u64map_release(&d.functions);
	u64map_release(&d.locations);
	free(d.strings);
	free(d.string_at);
	free(d.ids);
	free(d.labels);
	free(d.lines);
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
	/* A regular file says its size at once; a pipe is read to its end;
	 * a device such as /dev/zero would be read until the cap, and is
	 * refused instead. */
	struct stat st;
	int known = fstat(fd, &st) == 0;
	if (known && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
		close(fd);
		if (why && whylen)
			snprintf(why, whylen, "it is a device, not a file");
		return -EBADMSG;
	}
	if (known && S_ISREG(st.st_mode) && (uint64_t)st.st_size > PPROF_MAX_BYTES) {
		close(fd);
		return -EFBIG;
	}
	int ret = read_all(fd, PPROF_MAX_BYTES, &buf, &len);
	close(fd);
	if (ret)
		return ret;
	ret = pprof_decode(buf, len, out, why, whylen);
	free(buf);
	return ret;
}
