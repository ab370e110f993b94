/*
 * Unit tests of pprof.c: a profile that uses every field of the model
 * survives encode + decode unchanged; truncated and corrupt input is
 * refused with -EBADMSG and never crashes; a foreign file's arbitrary ids
 * are renumbered densely; files are written whole or not at all.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.pb-c.h"
#include "profile/pprof.h"
#include "profile/profile.h"

/* A profile with two mappings, an inlined call, a location without lines,
 * string and numeric labels, comments and every header field. */
static struct profile *profile_build(void)
{
	static const struct profile_value_type types[] = {{"samples", "count"},
							  {"cpu", "nanoseconds"}};
	struct profile *p = profile_new();

	assert_non_null(p);
	assert_int_equal(profile_set_sample_types(p, types, 2), 0);
	p->default_sample_type = 1;
	uint64_t exe = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/app", "abcdef01");
	uint64_t lib = profile_add_mapping(p, 0x7f0000000000, 0x7f0000100000, 0x2000,
					   "/lib/x86_64-linux-gnu/libc.so.6", "");
	p->mappings[exe - 1].has_functions = 1;
	p->mappings[exe - 1].has_line_numbers = 1;
	p->mappings[lib - 1].has_inline_frames = 1;

	uint64_t f_main = profile_add_function(p, "main", "main", "app.c", 40);
	uint64_t f_work = profile_add_function(p, "ns::work(int)", "_ZN2ns4workEi", "work.cc", 10);
	uint64_t f_inl = profile_add_function(p, "square", NULL, "work.cc", 3);
	struct profile_line inlined[] = {{f_inl, 4}, {f_work, 12}};
	struct profile_line in_main[] = {{f_main, 44}};
	uint64_t l_work = profile_add_location(p, exe, 0x401234, inlined, 2);
	uint64_t l_main = profile_add_location(p, exe, 0x400100, in_main, 1);
	uint64_t l_libc = profile_add_location(p, lib, 0x7f0000000abc, NULL, 0);

	uint64_t stack1[] = {l_work, l_main};
	uint64_t stack2[] = {l_libc, l_work, l_main};
	int64_t v1[] = {3, 30000000}, v2[] = {1, 10000000};
	struct profile_label labels[] = {
	    {"pid", NULL, 4242, ""},
	    {"tid", NULL, 4243, ""},
	    {"thread", "worker-1", 0, ""},
	    {"bytes", NULL, -7, "bytes"},
	};
	assert_int_equal(profile_add_sample(p, stack1, 2, v1, labels, 4), 0);
	assert_int_equal(profile_add_sample(p, stack2, 3, v2, labels, 2), 0);
	assert_int_equal(profile_add_sample(p, NULL, 0, v2, NULL, 0), 0);

	assert_int_equal(profile_add_comment(p, "command: ./app --port 8080"), 0);
	assert_int_equal(profile_add_comment(p, "lost: 0"), 0);
	p->time_nanos = 1700000000123456789LL;
	p->duration_nanos = 10000000000LL;
	p->period_type.type = profile_intern(p, "cpu");
	p->period_type.unit = profile_intern(p, "nanoseconds");
	p->period = 10101010;
	p->drop_frames = profile_intern(p, "^__libc_start");
	return p;
}

static void assert_label_equal(const struct profile_label *a, const struct profile_label *b)
{
	assert_string_equal(a->key, b->key);
	assert_int_equal(!a->str, !b->str);
	if (a->str)
		assert_string_equal(a->str, b->str);
	else
		assert_int_equal(a->num, b->num);
	assert_string_equal(a->num_unit ? a->num_unit : "", b->num_unit ? b->num_unit : "");
}

static void assert_samples_equal(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nsamples, b->nsamples);
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct profile_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_int_equal(x->nlocations, y->nlocations);
		for (size_t j = 0; j < x->nlocations; j++)
			assert_int_equal(x->location_ids[j], y->location_ids[j]);
		for (size_t j = 0; j < a->nsample_types; j++)
			assert_int_equal(x->values[j], y->values[j]);
		assert_int_equal(x->nlabels, y->nlabels);
		for (size_t j = 0; j < x->nlabels; j++)
			assert_label_equal(&x->labels[j], &y->labels[j]);
	}
}

static void assert_tables_equal(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nmappings, b->nmappings);
	for (size_t i = 0; i < a->nmappings; i++) {
		const struct profile_mapping *x = &a->mappings[i], *y = &b->mappings[i];

		assert_int_equal(x->id, y->id);
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->limit, y->limit);
		assert_int_equal(x->offset, y->offset);
		assert_string_equal(x->file, y->file);
		assert_string_equal(x->build_id, y->build_id);
		assert_int_equal(x->has_functions, y->has_functions);
		assert_int_equal(x->has_filenames, y->has_filenames);
		assert_int_equal(x->has_line_numbers, y->has_line_numbers);
		assert_int_equal(x->has_inline_frames, y->has_inline_frames);
	}
	assert_int_equal(a->nfunctions, b->nfunctions);
	for (size_t i = 0; i < a->nfunctions; i++) {
		const struct profile_function *x = &a->functions[i], *y = &b->functions[i];

		assert_int_equal(x->id, y->id);
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->system_name, y->system_name);
		assert_string_equal(x->file, y->file);
		assert_int_equal(x->start_line, y->start_line);
	}
	assert_int_equal(a->nlocations, b->nlocations);
	for (size_t i = 0; i < a->nlocations; i++) {
		const struct profile_location *x = &a->locations[i], *y = &b->locations[i];

		assert_int_equal(x->id, y->id);
		assert_int_equal(x->mapping_id, y->mapping_id);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->nlines, y->nlines);
		for (size_t j = 0; j < x->nlines; j++) {
			assert_int_equal(x->lines[j].function_id, y->lines[j].function_id);
			assert_int_equal(x->lines[j].line, y->lines[j].line);
		}
	}
}

static void assert_profiles_equal(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nsample_types, b->nsample_types);
	for (size_t i = 0; i < a->nsample_types; i++) {
		assert_string_equal(a->sample_types[i].type, b->sample_types[i].type);
		assert_string_equal(a->sample_types[i].unit, b->sample_types[i].unit);
	}
	assert_int_equal(a->default_sample_type, b->default_sample_type);
	assert_tables_equal(a, b);
	assert_samples_equal(a, b);
	assert_int_equal(a->ncomments, b->ncomments);
	for (size_t i = 0; i < a->ncomments; i++)
		assert_string_equal(a->comments[i], b->comments[i]);
	assert_int_equal(a->time_nanos, b->time_nanos);
	assert_int_equal(a->duration_nanos, b->duration_nanos);
	assert_string_equal(a->period_type.type, b->period_type.type);
	assert_string_equal(a->period_type.unit, b->period_type.unit);
	assert_int_equal(a->period, b->period);
	assert_string_equal(a->drop_frames, b->drop_frames);
	assert_string_equal(a->keep_frames, b->keep_frames);
}

static void round_trip(int gzip)
{
	struct profile *p = profile_build(), *q;
	void *buf;
	size_t len;
	char why[128] = "";

	assert_int_equal(pprof_encode(p, gzip, &buf, &len), 0);
	assert_true(len > 10);
	assert_int_equal(gzip, ((unsigned char *)buf)[0] == 0x1f);
	assert_int_equal(pprof_decode(buf, len, &q, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_profiles_equal(p, q);
	free(buf);
	profile_free(p);
	profile_free(q);
}

static void test_round_trip_gzip(void **state)
{
	round_trip(1);
}

static void test_round_trip_raw(void **state)
{
	round_trip(0);
}

/* Every strict prefix of a gzip file is refused; prefixes of the raw
 * message may happen to be valid messages, but never crash. */
static void test_truncated(void **state)
{
	struct profile *p = profile_build(), *q;
	void *gz, *raw;
	size_t gzlen, rawlen;
	char why[128];

	assert_int_equal(pprof_encode(p, 1, &gz, &gzlen), 0);
	assert_int_equal(pprof_encode(p, 0, &raw, &rawlen), 0);
	for (size_t n = 0; n < gzlen; n++) {
		why[0] = '\0';
		assert_int_equal(pprof_decode(gz, n, &q, why, sizeof(why)), -EBADMSG);
		assert_null(q);
		assert_true(why[0] != '\0');
	}
	for (size_t n = 0; n < rawlen; n++) {
		int ret = pprof_decode(raw, n, &q, why, sizeof(why));
		assert_true(ret == 0 || ret == -EBADMSG);
		profile_free(q);
	}
	assert_int_equal(pprof_decode(raw, 0, &q, NULL, 0), -EBADMSG);
	free(gz);
	free(raw);
	profile_free(p);
}

/* Each byte of the message flipped in turn: decoded or refused, and a
 * decoded profile is consistent enough to walk. */
static void test_corrupt_bytes(void **state)
{
	struct profile *p = profile_build(), *q;
	unsigned char *raw;
	size_t len;

	assert_int_equal(pprof_encode(p, 0, (void **)&raw, &len), 0);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			raw[i] ^= (unsigned char)(1 << bit);
			int ret = pprof_decode(raw, len, &q, NULL, 0);
			assert_true(ret == 0 || ret == -EBADMSG);
			for (size_t s = 0; q && s < q->nsamples; s++)
				for (size_t l = 0; l < q->samples[s].nlocations; l++)
					assert_non_null(
					    profile_location(q, q->samples[s].location_ids[l]));
			profile_free(q);
			raw[i] ^= (unsigned char)(1 << bit);
		}
	}
	free(raw);
	profile_free(p);
}

static void test_garbage(void **state)
{
	static const unsigned char gz_garbage[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad};
	unsigned char junk[4096];
	struct profile *q;
	char why[128];

	srand(7);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	int ret = pprof_decode(junk, sizeof(junk), &q, why, sizeof(why));
	assert_int_equal(ret, -EBADMSG);
	assert_int_equal(pprof_decode(gz_garbage, sizeof(gz_garbage), &q, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "gzip"));
	assert_int_equal(pprof_decode("hello", 5, &q, why, sizeof(why)), -EBADMSG);
}

/* The wire format as protobuf allows it: comments packed or not, fields
 * recce does not know skipped whatever their wire type; a known field
 * with the wrong wire type, or a group, refused. */
static void test_wire_edges(void **state)
{
	static const unsigned char ok[] = {
	    0x32, 0x00, 0x32, 0x01, 'a', 0x32, 0x01, 'b',	/* strings "", "a", "b" */
	    0x6a, 0x02, 0x01, 0x02,				/* comments 1, 2, packed */
	    0x68, 0x01,						/* comment 1, not packed */
	    0x80, 0x7d, 0x05,					/* field 2000, a varint */
	    0x85, 0x7d, 1,    2,    3,	 4,			/* ... 4 bytes */
	    0x81, 0x7d, 1,    2,    3,	 4,    5,    6,	  7, 8, /* ... 8 bytes */
	    0x82, 0x7d, 0x01, 0xff,				/* ... bytes */
	};
	static const unsigned char wrong_wire[] = {0x32, 0x00, 0x10, 0x01};
	static const unsigned char group[] = {0x32, 0x00, 0x2b, 0x2c};
	static const unsigned char long_varint[] = {0x32, 0x00, 0x48, 0xff, 0xff, 0xff, 0xff,
						    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	struct profile *q;
	char why[128];

	(void)state;
	assert_int_equal(pprof_decode(ok, sizeof(ok), &q, why, sizeof(why)), 0);
	assert_int_equal(q->ncomments, 3);
	assert_string_equal(q->comments[0], "a");
	assert_string_equal(q->comments[1], "b");
	assert_string_equal(q->comments[2], "a");
	profile_free(q);
	assert_int_equal(pprof_decode(wrong_wire, sizeof(wrong_wire), &q, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "field 2 of the profile has the wrong wire type"));
	assert_int_equal(pprof_decode(group, sizeof(group), &q, why, sizeof(why)), -EBADMSG);
	assert_int_equal(pprof_decode(long_varint, sizeof(long_varint), &q, why, sizeof(why)),
			 -EBADMSG);
}

/*
 * A hand-made foreign message: ids are arbitrary (mapping 100, functions
 * 7 and 3, locations 42 and 9), no default sample type.
 */
struct fixture {
	Perftools__Profiles__Profile msg;
	Perftools__Profiles__ValueType types[2], *type_ptrs[2];
	Perftools__Profiles__Mapping mapping, *mapping_ptrs[1];
	Perftools__Profiles__Function functions[2], *function_ptrs[2];
	Perftools__Profiles__Line lines[2], *line_ptrs[2];
	Perftools__Profiles__Location locations[2], *location_ptrs[2];
	Perftools__Profiles__Sample sample, *sample_ptrs[1];
	Perftools__Profiles__Label label, *label_ptrs[1];
	uint64_t stack[2];
	int64_t values[2];
	char *strings[10];
};

static void fixture_init(struct fixture *f)
{
	static const char *strings[] = {"",	    "samples", "count", "cpu",	  "nanoseconds",
					"/srv/app", "main",    "hot",	"app.go", "tid"};

	memset(f, 0, sizeof(*f));
	perftools__profiles__profile__init(&f->msg);
	for (int i = 0; i < 10; i++)
		f->strings[i] = (char *)strings[i];
	f->msg.string_table = f->strings;
	f->msg.n_string_table = 10;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&f->types[i]);
		f->types[i].type = 1 + 2 * i;
		f->types[i].unit = 2 + 2 * i;
		f->type_ptrs[i] = &f->types[i];
		perftools__profiles__function__init(&f->functions[i]);
		f->functions[i].id = i ? 3 : 7;
		f->functions[i].name = 6 + i; /* 7: main, 3: hot */
		f->functions[i].filename = 8;
		f->function_ptrs[i] = &f->functions[i];
		perftools__profiles__line__init(&f->lines[i]);
		f->lines[i].function_id = f->functions[i].id;
		f->lines[i].line = 10 + i;
		f->line_ptrs[i] = &f->lines[i];
		perftools__profiles__location__init(&f->locations[i]);
		f->locations[i].id = i ? 9 : 42;
		f->locations[i].mapping_id = 100;
		f->locations[i].address = 0x1000 + (uint64_t)i;
		f->locations[i].n_line = 1;
		f->locations[i].line = &f->line_ptrs[i];
		f->location_ptrs[i] = &f->locations[i];
	}
	f->msg.sample_type = f->type_ptrs;
	f->msg.n_sample_type = 2;
	f->msg.function = f->function_ptrs;
	f->msg.n_function = 2;
	f->msg.location = f->location_ptrs;
	f->msg.n_location = 2;
	perftools__profiles__mapping__init(&f->mapping);
	f->mapping.id = 100;
	f->mapping.filename = 5;
	f->mapping_ptrs[0] = &f->mapping;
	f->msg.mapping = f->mapping_ptrs;
	f->msg.n_mapping = 1;
	perftools__profiles__label__init(&f->label);
	f->label.key = 9;
	f->label.num = 77;
	f->label_ptrs[0] = &f->label;
	perftools__profiles__sample__init(&f->sample);
	f->stack[0] = 9; /* leaf: hot */
	f->stack[1] = 42;
	f->values[0] = 5;
	f->values[1] = 50;
	f->sample.location_id = f->stack;
	f->sample.n_location_id = 2;
	f->sample.value = f->values;
	f->sample.n_value = 2;
	f->sample.label = f->label_ptrs;
	f->sample.n_label = 1;
	f->sample_ptrs[0] = &f->sample;
	f->msg.sample = f->sample_ptrs;
	f->msg.n_sample = 1;
}

static int fixture_decode(struct fixture *f, struct profile **p, char *why, size_t whylen)
{
	size_t len = perftools__profiles__profile__get_packed_size(&f->msg);
	uint8_t *buf = malloc(len + 1);

	assert_non_null(buf);
	perftools__profiles__profile__pack(&f->msg, buf);
	int ret = pprof_decode(buf, len, p, why, whylen);
	free(buf);
	return ret;
}

static void test_foreign_ids(void **state)
{
	struct fixture f;
	struct profile *p;

	fixture_init(&f);
	assert_int_equal(fixture_decode(&f, &p, NULL, 0), 0);
	assert_int_equal(p->nmappings, 1);
	assert_int_equal(p->mappings[0].id, 1);
	assert_string_equal(p->mappings[0].file, "/srv/app");
	assert_int_equal(p->nfunctions, 2);
	assert_int_equal(p->nlocations, 2);
	assert_int_equal(p->locations[1].id, 2);
	assert_int_equal(p->locations[1].mapping_id, 1);
	/* No default_sample_type in the file: the last type is the default. */
	assert_int_equal(p->default_sample_type, 1);

	const struct profile_sample *s = &p->samples[0];
	const struct profile_location *leaf = profile_location(p, s->location_ids[0]);
	const struct profile_location *root = profile_location(p, s->location_ids[1]);
	assert_non_null(leaf);
	assert_non_null(root);
	assert_string_equal(profile_function(p, leaf->lines[0].function_id)->name, "hot");
	assert_string_equal(profile_function(p, root->lines[0].function_id)->name, "main");
	assert_int_equal(leaf->lines[0].line, 11);
	assert_int_equal(s->values[1], 50);
	assert_int_equal(profile_sample_label(s, "tid")->num, 77);
	profile_free(p);

	f.msg.default_sample_type = 1; /* "samples" */
	assert_int_equal(fixture_decode(&f, &p, NULL, 0), 0);
	assert_int_equal(p->default_sample_type, 0);
	profile_free(p);
}

/* One way to break the fixture and a word the reason must contain. */
struct breakage {
	void (*apply)(struct fixture *f);
	const char *why;
};

static void no_string_table(struct fixture *f)
{
	f->msg.n_string_table = 0;
}
static void first_string_not_empty(struct fixture *f)
{
	f->strings[0] = "x";
}
static void string_out_of_range(struct fixture *f)
{
	f->functions[1].name = 10;
}
static void negative_string(struct fixture *f)
{
	f->types[0].unit = -1;
}
static void label_string_out_of_range(struct fixture *f)
{
	f->label.str = 99;
}
static void comment_out_of_range(struct fixture *f)
{
	static int64_t comment = 12;
	f->msg.comment = &comment;
	f->msg.n_comment = 1;
}
static void missing_mapping(struct fixture *f)
{
	f->locations[0].mapping_id = 101;
}
static void missing_function(struct fixture *f)
{
	f->lines[1].function_id = 8;
}
static void missing_location(struct fixture *f)
{
	f->stack[1] = 43;
}
static void too_few_values(struct fixture *f)
{
	f->sample.n_value = 1;
}
static void duplicate_location(struct fixture *f)
{
	f->locations[1].id = 42;
}
static void zero_function_id(struct fixture *f)
{
	f->functions[0].id = 0;
}

static void test_bad_references(void **state)
{
	static const struct breakage cases[] = {
	    {no_string_table, "string table"},
	    {first_string_not_empty, "string table"},
	    {string_out_of_range, "string index 10"},
	    {negative_string, "string index -1"},
	    {label_string_out_of_range, "label"},
	    {comment_out_of_range, "comment"},
	    {missing_mapping, "mapping 101"},
	    {missing_function, "function 8"},
	    {missing_location, "location 43"},
	    {too_few_values, "1 values for 2"},
	    {duplicate_location, "id 42"},
	    {zero_function_id, "id 0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture f;
		struct profile *p = (struct profile *)1;
		char why[160] = "";

		fixture_init(&f);
		cases[i].apply(&f);
		assert_int_equal(fixture_decode(&f, &p, why, sizeof(why)), -EBADMSG);
		assert_null(p);
		if (!strstr(why, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, why, cases[i].why);
	}
}

static void test_write_read_file(void **state)
{
	char dir[] = "/tmp/recce-test-pprof.XXXXXX", path[128], tmp[140];
	struct profile *p = profile_build(), *q;
	struct stat st;
	char why[128];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(pprof_check_writable(path), 0);
	assert_int_equal(stat(tmp, &st), -1); /* the check leaves nothing behind */
	assert_int_equal(pprof_write_file(p, path), 0);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(pprof_read_file(path, &q, why, sizeof(why)), 0);
	assert_profiles_equal(p, q);
	profile_free(q);

	assert_int_equal(pprof_check_writable(dir), -EISDIR);
	assert_int_equal(pprof_write_file(p, dir), -EISDIR);
	assert_int_equal(pprof_read_file(dir, &q, why, sizeof(why)), -EISDIR);
	snprintf(path, sizeof(path), "%s/no/such/dir.pb.gz", dir);
	assert_int_equal(pprof_check_writable(path), -ENOENT);
	assert_int_equal(pprof_write_file(p, path), -ENOENT);
	assert_int_equal(pprof_read_file(path, &q, why, sizeof(why)), -ENOENT);
	assert_int_equal(pprof_check_writable(""), -EINVAL);

	/* A full disk: the error comes back as -ENOSPC. */
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(pprof_check_writable("/dev/full"), 0);
		assert_int_equal(pprof_write_file(p, "/dev/full"), -ENOSPC);
	}
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	unlink(path);
	rmdir(dir);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip_gzip), cmocka_unit_test(test_round_trip_raw),
	    cmocka_unit_test(test_truncated),	    cmocka_unit_test(test_corrupt_bytes),
	    cmocka_unit_test(test_garbage),	    cmocka_unit_test(test_foreign_ids),
	    cmocka_unit_test(test_bad_references),  cmocka_unit_test(test_write_read_file),
	    cmocka_unit_test(test_wire_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
