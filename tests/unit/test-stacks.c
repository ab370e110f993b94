/*
 * Unit tests of stacks.c: frames run root first with inlined frames
 * expanded (outer before inner), unnamed code is named MODULE+0xOFFSET or
 * 0xADDRESS, and the pid, tid, focus and ignore filters keep exactly the
 * samples they should and count what they drop. And profile views: the
 * sample type chosen by name or by default, an unknown one refused, a
 * timeline asked of a profile without one refused, and a diff that holds
 * both sides and refuses profiles of different kinds.
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/stacks.h"
#include "profile/view.h"

/*
 * Samples, leaf first, values {samples, cpu}:
 *   0: work+square (inlined) <- main          pid 1 tid 11  {3, 30}
 *   1: libfoo code <- main                     pid 1 tid 12  {2, 20}
 *   2: code outside any mapping                pid 2 tid 21  {1, 10}
 *   3: mangled-only function <- main           pid 2 tid 22  {0, 5}
 */
static struct profile *profile_build(void)
{
	static const struct profile_value_type types[] = {{"samples", "count"},
							  {"cpu", "nanoseconds"}};
	struct profile *p = profile_new();
	assert_non_null(p);

	uint64_t exe = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/app", "");
	uint64_t lib = profile_add_mapping(p, 0x7f0000001000, 0x7f0000005000, 0x2000,
					   "/usr/lib/libfoo.so.1", "");
	uint64_t f_main = profile_add_function(p, "main", NULL, "app.c", 30);
	uint64_t f_work = profile_add_function(p, "work", NULL, "app.c", 10);
	uint64_t f_square = profile_add_function(p, "square", NULL, "math.h", 2);
	uint64_t f_mangled = profile_add_function(p, "", "_Z7mangledv", "", 0);
	struct profile_line inlined[] = {{f_square, 3}, {f_work, 12}};
	struct profile_line in_main[] = {{f_main, 33}};
	struct profile_line in_mangled[] = {{f_mangled, 0}};
	uint64_t l_work = profile_add_location(p, exe, 0x401000, inlined, 2);
	uint64_t l_main = profile_add_location(p, exe, 0x400100, in_main, 1);
	uint64_t l_lib = profile_add_location(p, lib, 0x7f0000001234, NULL, 0);
	uint64_t l_nomap = profile_add_location(p, 0, 0xdead, NULL, 0);
	uint64_t l_mangled = profile_add_location(p, exe, 0x402000, in_mangled, 1);

	const struct {
		uint64_t stack[2];
		size_t n;
		int64_t pid, tid, values[2];
	} samples[] = {
	    {{l_work, l_main}, 2, 1, 11, {3, 30}},
	    {{l_lib, l_main}, 2, 1, 12, {2, 20}},
	    {{l_nomap}, 1, 2, 21, {1, 10}},
	    {{l_mangled, l_main}, 2, 2, 22, {0, 5}},
	};
	assert_int_equal(profile_set_sample_types(p, types, 2), 0);
	for (size_t i = 0; i < 4; i++) {
		struct profile_label labels[] = {
		    {"pid", NULL, samples[i].pid, NULL},
		    {"tid", NULL, samples[i].tid, NULL},
		    {"thread", "worker", 0, NULL},
		};
		assert_int_equal(profile_add_sample(p, samples[i].stack, samples[i].n,
						    samples[i].values, labels, 3),
				 0);
	}
	return p;
}

static void assert_frame(const struct stack_frame *f, const char *name, const char *file,
			 int64_t line, const char *module)
{
	assert_string_equal(f->name, name);
	assert_string_equal(f->file, file);
	assert_int_equal(f->line, line);
	assert_string_equal(f->module, module);
}

static void test_frames(void **state)
{
	struct profile *p = profile_build();
	struct stack_set set;

	assert_int_equal(stacks_from_profile(p, 0, NULL, &set), 0);
	assert_string_equal(set.type, "samples");
	assert_string_equal(set.unit, "count");
	/* Sample 3 weighs 0 samples: left out, not counted as dropped. */
	assert_int_equal(set.n, 3);
	assert_int_equal(set.total, 6);
	assert_int_equal(set.dropped, 0);

	/* Root first; the inlined square comes after work, which holds it. */
	const struct stack_entry *e = &set.entries[0];
	assert_int_equal(e->nframes, 3);
	assert_int_equal(e->value, 3);
	assert_ptr_equal(e->sample, &p->samples[0]);
	assert_frame(&e->frames[0], "main", "app.c", 33, "app");
	assert_frame(&e->frames[1], "work", "app.c", 12, "app");
	assert_frame(&e->frames[2], "square", "math.h", 3, "app");

	/* Unsymbolized: module base name and file offset (0x234 + 0x2000). */
	e = &set.entries[1];
	assert_int_equal(e->nframes, 2);
	assert_frame(&e->frames[0], "main", "app.c", 33, "app");
	assert_frame(&e->frames[1], "libfoo.so.1+0x2234", "", 0, "libfoo.so.1");

	e = &set.entries[2];
	assert_int_equal(e->nframes, 1);
	assert_frame(&e->frames[0], "0xdead", "", 0, "");
	stacks_release(&set);

	/* The cpu value keeps sample 3, whose function has only a system name. */
	assert_int_equal(stacks_from_profile(p, 1, NULL, &set), 0);
	assert_string_equal(set.type, "cpu");
	assert_int_equal(set.n, 4);
	assert_int_equal(set.total, 65);
	assert_frame(&set.entries[3].frames[1], "_Z7mangledv", "", 0, "app");
	stacks_release(&set);

	assert_int_equal(stacks_from_profile(p, 2, NULL, &set), -EINVAL);
	profile_free(p);
}

/* The values of the kept entries, in order, as a string such as "3,1". */
static const char *kept_values(const struct profile *p, const struct stack_filter *filter,
			       int64_t *dropped)
{
	static char buf[64];
	struct stack_set set;
	size_t len = 0;

	assert_int_equal(stacks_from_profile(p, 1, filter, &set), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < set.n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld", i ? "," : "",
					(long long)set.entries[i].value);
	*dropped = set.dropped;
	stacks_release(&set);
	return buf;
}

static void test_filters(void **state)
{
	struct profile *p = profile_build();
	struct stack_filter filter = {0};
	int64_t pids[] = {2}, tids[] = {11, 21}, dropped;
	regex_t focus, ignore;

	assert_string_equal(kept_values(p, &filter, &dropped), "30,20,10,5");
	assert_int_equal(dropped, 0);

	filter.pids = pids;
	filter.npids = 1;
	assert_string_equal(kept_values(p, &filter, &dropped), "10,5");
	assert_int_equal(dropped, 50);

	filter.tids = tids;
	filter.ntids = 2;
	assert_string_equal(kept_values(p, &filter, &dropped), "10");
	assert_int_equal(dropped, 55);

	/* Focus matches any frame, an inlined one too. */
	filter = (struct stack_filter){0};
	assert_int_equal(regcomp(&focus, "^squ", REG_EXTENDED | REG_NOSUB), 0);
	filter.focus = &focus;
	assert_string_equal(kept_values(p, &filter, &dropped), "30");
	assert_int_equal(dropped, 35);
	regfree(&focus);

	/* ... and generated names: the module of unsymbolized code. */
	assert_int_equal(regcomp(&focus, "libfoo|mangled", REG_EXTENDED | REG_NOSUB), 0);
	filter.focus = &focus;
	assert_string_equal(kept_values(p, &filter, &dropped), "20,5");

	assert_int_equal(regcomp(&ignore, "^main$", REG_EXTENDED | REG_NOSUB), 0);
	filter.ignore = &ignore;
	assert_string_equal(kept_values(p, &filter, &dropped), "");
	assert_int_equal(dropped, 65);
	filter.focus = NULL;
	assert_string_equal(kept_values(p, &filter, &dropped), "10");
	regfree(&focus);
	regfree(&ignore);

	/* A tid filter drops samples that have no tid label. */
	uint64_t loc = 1;
	int64_t values[] = {1, 7};
	assert_int_equal(profile_add_sample(p, &loc, 1, values, NULL, 0), 0);
	filter = (struct stack_filter){.tids = tids, .ntids = 2};
	assert_string_equal(kept_values(p, &filter, &dropped), "30,10");
	assert_int_equal(dropped, 32);
	profile_free(p);
}

static void test_empty(void **state)
{
	static const struct profile_value_type type = {"samples", "count"};
	struct profile *p = profile_new();
	struct stack_set set;

	assert_int_equal(stacks_from_profile(p, 0, NULL, &set), -EINVAL);
	assert_int_equal(profile_set_sample_types(p, &type, 1), 0);
	assert_int_equal(stacks_from_profile(p, 0, NULL, &set), 0);
	assert_int_equal(set.n, 0);
	assert_int_equal(set.total, 0);
	stacks_release(&set);

	/* A sample without locations is kept, with no frames. */
	int64_t one = 1;
	assert_int_equal(profile_add_sample(p, NULL, 0, &one, NULL, 0), 0);
	assert_int_equal(stacks_from_profile(p, 0, NULL, &set), 0);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.entries[0].nframes, 0);
	stacks_release(&set);
	profile_free(p);
}

static void test_view(void **state)
{
	struct profile *p = profile_build();
	struct profile_view v;
	char types[64];

	(void)state;
	p->default_sample_type = 1;
	assert_int_equal(profile_view_build(p, NULL, NULL, 0, &v), 0);
	assert_int_equal(v.type, 1);
	assert_int_equal(v.set.total, 65); /* cpu: 30 + 20 + 10 + 5 */
	assert_null(v.events);
	profile_view_release(&v);
	assert_int_equal(profile_view_build(p, "samples", NULL, 0, &v), 0);
	assert_int_equal(v.type, 0);
	assert_int_equal(v.set.total, 6);
	profile_view_release(&v);
	assert_int_equal(profile_view_build(p, "alloc_space", NULL, 0, &v), -ENOENT);
	assert_int_equal(v.failed, VIEW_NO_TYPE);
	profile_view_release(&v);
	assert_int_equal(profile_view_build(p, NULL, NULL, 1, &v), -ENODATA);
	assert_int_equal(v.failed, VIEW_NO_TIMELINE);
	profile_view_release(&v);
	profile_view_types(p, types, sizeof(types));
	assert_string_equal(types, "samples, cpu");
	profile_free(p);
}

static void test_view_diff(void **state)
{
	static const struct profile_value_type alloc[] = {{"alloc_space", "bytes"}};
	struct profile *before = profile_build(), *after = profile_build();
	struct profile *other = profile_new();
	struct profile_view v;

	(void)state;
	assert_int_equal(profile_view_diff(before, after, "cpu", NULL, &v), 0);
	assert_int_equal(v.set.n, 4);
	assert_int_equal(v.before.n, 4);
	assert_int_equal(v.merged.n, 8);
	assert_int_equal(v.merged.total, 65);
	profile_view_release(&v);
	assert_non_null(other);
	assert_int_equal(profile_set_sample_types(other, alloc, 1), 0);
	assert_int_equal(profile_view_diff(other, after, "cpu", NULL, &v), -EDOM);
	assert_int_equal(v.failed, VIEW_MISMATCH);
	profile_view_release(&v);
	profile_free(before);
	profile_free(after);
	profile_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames),    cmocka_unit_test(test_filters),
	    cmocka_unit_test(test_empty),     cmocka_unit_test(test_view),
	    cmocka_unit_test(test_view_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
