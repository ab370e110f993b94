/*
 * pprof decoding (see pprof.h). The decoder checks every reference of the
 * unpacked message before it adds anything to the model, and builds the
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

#include "profile/pprof-pb.h"
#include "profile/timeline.h"
#include "util/readall.h"
#include "util/u64map.h"

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
				if (why && whylen)
					snprintf(why, whylen,
						 "it inflates to more than %zu MiB (a gzip bomb?)",
						 PPROF_MAX_BYTES >> 20);
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
