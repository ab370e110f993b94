/*
 * Unit tests of cutting a recording into calls: only the samples of a
 * call's thread inside its window are kept, cut at the captured function
 * (found by its symbol) under the call's own frame, with the call's
 * labels, values summed per call and stack, and a timeline in time order;
 * a sample without the function is counted as outside; a call that names
 * its own function cut there; a recording without a timeline is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/capture-profile.h"
#include "profile/profile.h"
#include "profile/timeline.h"

/* A recording: functions leaf, handle (symbol _Z6handlei, named name
 * in file), main; samples 0: leaf<handle<main on tid 7, 1: main alone on
 * tid 7, 2: leaf<handle<main on tid 8; and a timeline. */
static struct profile *recording_of(const char *name, const char *file)
{
	static const struct profile_value_type types[] = {{"samples", "count"},
							  {"cpu", "nanoseconds"}};
	struct profile *p = profile_new();
	uint64_t f[3], l[3];
	const char *names[3] = {"leaf", name, "main"};
	const char *syms[3] = {"leaf", "_Z6handlei", "main"};

	assert_non_null(p);
	assert_int_equal(profile_set_sample_types(p, types, 2), 0);
	p->default_sample_type = 1;
	for (int i = 0; i < 3; i++) {
		f[i] = profile_add_function(p, names[i], syms[i], i == 1 ? file : "x.c", 0);
		struct profile_line line = {f[i], 10 + i};
		l[i] = profile_add_location(p, 0, 0x1000 + (uint64_t)i, &line, 1);
	}
	int64_t v[2] = {0, 0};
	struct profile_label t7[2] = {{"pid", NULL, 7, NULL}, {"tid", NULL, 7, NULL}};
	struct profile_label t8[2] = {{"pid", NULL, 7, NULL}, {"tid", NULL, 8, NULL}};
	assert_int_equal(profile_add_sample(p, l, 3, v, t7, 2), 0);
	assert_int_equal(profile_add_sample(p, l + 2, 1, v, t7, 2), 0);
	assert_int_equal(profile_add_sample(p, l, 3, v, t8, 2), 0);

	/* (sample, time, period): tid 7 in handle at 100, 200, 300, in main at
	 * 250, tid 8 in handle at 150, tid 7 in handle at 900. */
	static const int64_t ev[][3] = {{0, 100, 10}, {2, 150, 10}, {0, 200, 20},
					{1, 250, 10}, {0, 300, 30}, {0, 900, 40}};
	struct timeline_writer w;
	unsigned char *buf;
	size_t len;
	timeline_writer_init(&w, 0);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		assert_int_equal(timeline_writer_add(&w, (uint64_t)ev[i][0], ev[i][1], ev[i][2]),
				 0);
	assert_int_equal(timeline_writer_take(&w, &buf, &len), 0);
	timeline_writer_release(&w);
	assert_int_equal(profile_set_timeline(p, buf, len), 0);
	free(buf);
	return p;
}

static struct profile *recording(void)
{
	return recording_of("handle", "x.c");
}

static const char *fn_name(const struct profile *q, uint64_t loc)
{
	const struct profile_location *l = profile_location(q, loc);

	assert_non_null(l);
	return profile_function(q, l->lines[0].function_id)->name;
}

static void test_calls(void **state)
{
	struct profile *p = recording(), *q;
	const char *syms[] = {"_Z6handlei"};
	struct capture_call calls[2] = {{7, 150, 310, "call 1: handle", NULL, NULL, 0},
					{7, 850, 950, "call 2", NULL, NULL, 0}};
	struct capture_counts counts;

	(void)state;
	assert_int_equal(capture_profile(p, syms, 1, calls, 2, &q, &counts), 0);
	/* Call 1: tid 7 at 200 and 300 (handle), 250 (main: outside); not
	 * tid 8 at 150, nor 100 (before). Call 2: 900. */
	assert_int_equal(counts.kept, 3);
	assert_int_equal(counts.outside, 1);
	assert_int_equal(q->nsamples, 2);
	const struct profile_sample *s = &q->samples[0];
	assert_int_equal(s->nlocations, 3);
	assert_string_equal(fn_name(q, s->location_ids[0]), "leaf");
	assert_string_equal(fn_name(q, s->location_ids[1]), "handle");
	assert_string_equal(fn_name(q, s->location_ids[2]), "call 1: handle");
	assert_int_equal(s->values[0], 2);
	assert_int_equal(s->values[1], 50);
	assert_int_equal(profile_sample_label(s, "call")->num, 1);
	assert_int_equal(profile_sample_label(s, "tid")->num, 7);
	assert_string_equal(profile_sample_label(s, "thread")->str, "call 1: handle");
	s = &q->samples[1];
	assert_string_equal(fn_name(q, s->location_ids[2]), "call 2");
	assert_int_equal(s->values[1], 40);

	struct timeline_event *ev;
	size_t n;
	assert_int_equal(timeline_decode(q->timeline, q->timeline_len, q->nsamples, &ev, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ev[0].time_ns, 200);
	assert_int_equal(ev[1].time_ns, 300);
	assert_int_equal(ev[2].time_ns, 900);
	assert_int_equal(ev[2].index, 1);
	free(ev);
	profile_free(q);
	profile_free(p);
}

/* kept: the samples of a call of function (file, cut) kept from p, its
 * stacks cut at handle; the rest are outside. */
static uint64_t kept(struct profile *p, const char *function, const char *file, int cut)
{
	struct profile *q;
	struct capture_call call = {7, 150, 310, "slow call 1", function, file, cut};
	struct capture_counts counts;

	assert_int_equal(capture_profile(p, NULL, 0, &call, 1, &q, &counts), 0);
	for (size_t i = 0; i < q->nsamples; i++) {
		assert_int_equal(q->samples[i].nlocations, 3);
		assert_string_equal(fn_name(q, q->samples[i].location_ids[2]), "slow call 1");
	}
	assert_int_equal(counts.kept + counts.outside, 3);
	profile_free(q);
	return counts.kept;
}

/* A call that names its own function (trace --slow --profile): native
 * code by its name, its symbol, or its name as written without the
 * parameters a C++ name carries; Python code by its last name and its
 * file (whole, or the start a trace call keeps). */
static void test_call_function(void **state)
{
	(void)state;
	struct profile *p = recording();
	assert_int_equal(kept(p, "app:handle", NULL, 0), 2);
	assert_int_equal(kept(p, "app:_Z6handlei", NULL, 0), 2);
	assert_int_equal(kept(p, "handle", NULL, 0), 2);
	assert_int_equal(kept(p, "app:hand", NULL, 0), 0);
	profile_free(p);

	p = recording_of("handle(int)", "x.cc");
	assert_int_equal(kept(p, "app:handle", NULL, 0), 2);
	assert_int_equal(kept(p, "app:handle(long)", NULL, 0), 0);
	profile_free(p);

	p = recording_of("__main__.Server.handle", "/srv/app/server.py");
	assert_int_equal(kept(p, "py:server.handle", "/srv/app/server.py", 0), 2);
	assert_int_equal(kept(p, "py:server.handle", "/srv/app/ser", 1), 2);
	assert_int_equal(kept(p, "py:server.handle", "/srv/app/ser", 0), 0);
	assert_int_equal(kept(p, "py:server.handle", "/srv/other/server.py", 0), 0);
	assert_int_equal(kept(p, "py:server.serve", "/srv/app/server.py", 0), 0);
	profile_free(p);
}

/* A call no sample fell in: an empty profile, not a failure. */
static void test_empty_call(void **state)
{
	struct profile *p = recording(), *q;
	const char *syms[] = {"_Z6handlei"};
	struct capture_call call = {7, 400, 800, "call 1", NULL, NULL, 0};
	struct capture_counts counts;

	(void)state;
	assert_int_equal(capture_profile(p, syms, 1, &call, 1, &q, &counts), 0);
	assert_int_equal(counts.kept, 0);
	assert_int_equal(q->nsamples, 0);
	profile_free(q);
	profile_free(p);
}

static void test_no_timeline(void **state)
{
	struct profile *p = profile_new(), *q = (struct profile *)1;
	struct capture_call call = {7, 0, 10, "call 1", NULL, NULL, 0};
	struct capture_counts counts;

	(void)state;
	assert_int_equal(capture_profile(p, NULL, 0, &call, 1, &q, &counts), -ENODATA);
	assert_null(q);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_calls),
	    cmocka_unit_test(test_call_function),
	    cmocka_unit_test(test_empty_call),
	    cmocka_unit_test(test_no_timeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
