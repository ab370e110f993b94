/*
 * Unit tests of the continuous store and its queries (store/store.h,
 * store/query.h, profile/merge.h, util/when.h): windows written and read
 * back by time, pid, comm and label; profiles of two windows merged into
 * one sample per stack with the sums; retention by age and by size; a
 * corrupt profile left out; times and spans as people write them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/merge.h"
#include "profile/pprof.h"
#include "profile/profile.h"
#include "store/query.h"
#include "store/store.h"
#include "util/when.h"

#define S ((int64_t)1000000000)

/* A profile of one stack, leaf first: main -> fname, count samples. */
static struct profile *one_stack(const char *fname, int64_t count)
{
	struct profile *p = profile_new();
	static const struct profile_value_type types[] = {{"samples", "count"},
							  {"cpu", "nanoseconds"}};
	assert_int_equal(profile_set_sample_types(p, types, 2), 0);
	uint64_t m = profile_add_mapping(p, 0x1000, 0x9000, 0, "/bin/app", "abcd");
	uint64_t fm = profile_add_function(p, "main", "main", "app.c", 1);
	uint64_t ff = profile_add_function(p, fname, fname, "app.c", 10);
	struct profile_line lm = {fm, 5}, lf = {ff, 12};
	uint64_t locs[2] = {profile_add_location(p, m, 0x1100, &lf, 1),
			    profile_add_location(p, m, 0x1200, &lm, 1)};
	int64_t values[2] = {count, count * 10000000};
	struct profile_label label = {.key = "tid", .num = 7};
	assert_int_equal(profile_add_sample(p, locs, 2, values, &label, 1), 0);
	return p;
}

static void put_to(struct store *s, int64_t start, pid_t pid, const char *comm, const char *fname,
		   int64_t count, const char *unsent_to)
{
	struct profile *p = one_stack(fname, count);
	void *buf;
	size_t len;
	assert_int_equal(pprof_encode(p, 1, &buf, &len), 0);
	struct store_window w = {start, start + 10 * S, "h1", (uint64_t)count, 0, 0, 1, 1000};
	struct store_profile sp = {
	    start,	     start + 10 * S,   "h1", pid, comm, "/bin/app", "abcd", "/app.slice",
	    (uint64_t)count, count * 10000000, buf,  len};
	assert_int_equal(store_write(s, &w, &sp, 1, unsent_to), 0);
	free(buf);
	profile_free(p);
}

static void put(struct store *s, int64_t start, pid_t pid, const char *comm, const char *fname,
		int64_t count)
{
	put_to(s, start, pid, comm, fname, count, NULL);
}

static char *temp_dir(void)
{
	char tmpl[] = "/tmp/recce-store-XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

static void remove_dir(char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* The self samples of function name in p. */
static int64_t self_of(const struct profile *p, const char *name)
{
	int64_t n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_location *l =
		    profile_location(p, p->samples[i].location_ids[0]);
		if (strcmp(profile_function(p, l->lines[0].function_id)->name, name) == 0)
			n += p->samples[i].values[0];
	}
	return n;
}

static void test_write_query(void **state)
{
	(void)state;
	char *dir = temp_dir();
	struct store *s;
	const char *why;

	assert_int_equal(store_open(dir, 0, &s, &why), -ENOENT);
	assert_int_equal(store_open(dir, 1, &s, &why), 0);
	put(s, 100 * S, 42, "app", "work", 30);
	put(s, 110 * S, 42, "app", "work", 12);
	put(s, 110 * S, 43, "db", "seek", 5);
	put(s, 200 * S, 42, "app", "late", 1);

	struct profile *p;
	struct store_query_stats st;
	struct store_filter f = {.from_ns = 100 * S, .to_ns = 120 * S};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(st.profiles, 3);
	assert_int_equal(st.processes, 2);
	/* Two windows of one stack of one process: one sample, summed. */
	assert_int_equal(self_of(p, "work"), 42);
	assert_int_equal(self_of(p, "seek"), 5);
	assert_int_equal(self_of(p, "late"), 0);
	assert_int_equal(p->nsamples, 2);
	assert_int_equal(p->nfunctions, 3);
	assert_int_equal(p->samples[0].values[1], 42 * 10000000);
	const struct profile_label *l = profile_sample_label(&p->samples[0], "comm");
	assert_non_null(l);
	assert_string_equal(l->str, "app");
	assert_string_equal(profile_sample_label(&p->samples[0], "cgroup")->str, "/app.slice");
	assert_int_equal(profile_sample_label(&p->samples[0], "tid")->num, 7);
	assert_int_equal(p->time_nanos, 100 * S);
	assert_int_equal(p->duration_nanos, 20 * S);
	profile_free(p);

	const char *comms[] = {"db"};
	f = (struct store_filter){.from_ns = 0, .to_ns = 1000 * S, .comms = comms, .ncomms = 1};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(self_of(p, "seek"), 5);
	assert_int_equal(self_of(p, "work"), 0);
	profile_free(p);

	const int64_t pids[] = {42};
	const char *keys[] = {"exe"}, *values[] = {"/bin/app"};
	f = (struct store_filter){.from_ns = 150 * S,
				  .to_ns = 1000 * S,
				  .pids = pids,
				  .npids = 1,
				  .label_keys = keys,
				  .label_values = values,
				  .nlabels = 1};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(self_of(p, "late"), 1);
	assert_int_equal(st.profiles, 1);
	profile_free(p);

	/* Nothing in range: an empty profile, no error. */
	f = (struct store_filter){.from_ns = 300 * S, .to_ns = 400 * S};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(st.profiles, 0);
	assert_int_equal(p->nsamples, 0);
	profile_free(p);

	keys[0] = "colour";
	f = (struct store_filter){
	    .to_ns = 400 * S, .label_keys = keys, .label_values = values, .nlabels = 1};
	assert_int_equal(store_each(s, &f, NULL, NULL), -EINVAL);

	/* A profile that does not decode is left out, and counted. */
	struct store_window w = {300 * S, 310 * S, "h1", 1, 0, 0, 1, 0};
	struct store_profile bad = {300 * S, 310 * S, "h1", 44, "x", "", "", "", 1, 1, "junk", 4};
	assert_int_equal(store_write(s, &w, &bad, 1, NULL), 0);
	f = (struct store_filter){.from_ns = 0, .to_ns = 400 * S};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(st.profiles, 4);
	profile_free(p);
	store_close(s);

	/* A reader beside: the same data. */
	assert_int_equal(store_open(dir, 0, &s, &why), 0);
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	assert_int_equal(self_of(p, "work"), 42);
	profile_free(p);
	store_close(s);
	remove_dir(dir);
}

static int count_window(void *arg, const struct store_window *w)
{
	(void)w;
	++*(int *)arg;
	return 0;
}

static void test_retention(void **state)
{
	(void)state;
	char *dir = temp_dir();
	struct store *s;
	const char *why;
	size_t deleted, unsent;
	int n = 0;

	assert_int_equal(store_open(dir, 1, &s, &why), 0);
	for (int i = 0; i < 40; i++)
		put(s, (int64_t)i * 10 * S, 42, "app", "work", i + 1);
	assert_int_equal(store_retain(s, 100 * S, 0, &deleted, &unsent), 0);
	assert_int_equal(deleted, 10);
	assert_int_equal(store_windows(s, 0, 1000 * S, count_window, &n), 0);
	assert_int_equal(n, 30);
	/* A cap below the data: the oldest go until it fits. */
	int64_t bytes = store_bytes(s);
	assert_true(bytes > 0);
	assert_int_equal(store_retain(s, 0, (uint64_t)bytes / 2, &deleted, &unsent), 0);
	assert_true(deleted > 0);
	n = 0;
	assert_int_equal(store_windows(s, 0, 1000 * S, count_window, &n), 0);
	assert_int_equal(n, 30 - (int)deleted);
	struct profile *p;
	struct store_query_stats st;
	struct store_filter f = {.from_ns = 0, .to_ns = 1000 * S};
	assert_int_equal(store_query(s, &f, &p, &st), 0);
	/* The newest window is always kept. */
	assert_true(self_of(p, "work") >= 40);
	assert_true(st.first_ns > 100 * S);
	profile_free(p);
	store_close(s);
	remove_dir(dir);
}

/* Windows a destination has not taken: marked as they are written,
 * listed oldest first, unmarked when taken, and counted when retention
 * deletes them first. */
static void test_unsent(void **state)
{
	(void)state;
	char *dir = temp_dir();
	struct store *s;
	const char *why;
	int64_t starts[8];
	size_t total, deleted, unsent;

	assert_int_equal(store_open(dir, 1, &s, &why), 0);
	for (int i = 0; i < 6; i++)
		put_to(s, (int64_t)(5 - i) * 10 * S, 42, "app", "work", i + 1, "ch:8123/fleet");
	put_to(s, 60 * S, 42, "app", "work", 1, NULL);
	assert_int_equal(store_unsent(s, "ch:8123/fleet", starts, 4, &total), 4);
	assert_int_equal(total, 6);
	for (int i = 0; i < 4; i++)
		assert_int_equal(starts[i], (int64_t)i * 10 * S);
	assert_int_equal(store_unsent(s, "elsewhere", starts, 4, &total), 0);
	assert_int_equal(total, 0);
	assert_int_equal(store_sent(s, "ch:8123/fleet", 10 * S), 0);
	assert_int_equal(store_sent(s, "ch:8123/fleet", 10 * S), 0); /* twice: no harm */
	assert_int_equal(store_unsent(s, "ch:8123/fleet", starts, 8, &total), 5);
	assert_int_equal(starts[0], 0);
	assert_int_equal(starts[1], 20 * S);
	/* Retention takes windows 0 to 20 s: two of them were unsent. */
	assert_int_equal(store_retain(s, 30 * S, 0, &deleted, &unsent), 0);
	assert_int_equal(deleted, 3);
	assert_int_equal(unsent, 2);
	assert_int_equal(store_unsent(s, "ch:8123/fleet", starts, 8, &total), 3);
	assert_int_equal(starts[0], 30 * S);
	store_close(s);
	remove_dir(dir);
}

static void test_not_a_store(void **state)
{
	(void)state;
	char *dir = temp_dir();
	char path[256];
	snprintf(path, sizeof(path), "%s/" STORE_FILE, dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("this is not a database, only some words written over several lines\n", fp);
	fclose(fp);
	struct store *s;
	const char *why;
	assert_int_equal(store_open(dir, 0, &s, &why), -EBADMSG);
	assert_int_equal(store_open(dir, 1, &s, &why), -EBADMSG);
	remove_dir(dir);
}

static void test_when(void **state)
{
	(void)state;
	int64_t ns;

	assert_int_equal(when_span("10s", &ns), 0);
	assert_int_equal(ns, 10 * S);
	assert_int_equal(when_span("500ms", &ns), 0);
	assert_int_equal(ns, S / 2);
	assert_int_equal(when_span("2", &ns), 0);
	assert_int_equal(ns, 2 * S);
	assert_int_equal(when_span("7d", &ns), 0);
	assert_int_equal(ns, 7 * 86400 * S);
	assert_int_equal(when_span("1.5h", &ns), 0);
	assert_int_equal(ns, 5400 * S);
	assert_int_equal(when_span("-1h", &ns), -1);
	assert_int_equal(when_span("1y", &ns), -1);
	assert_int_equal(when_span("", &ns), -1);

	int64_t now = 1795585491 * S;
	assert_int_equal(when_time("now", now, now, &ns), 0);
	assert_int_equal(ns, now);
	assert_int_equal(when_time("-1h", now, now, &ns), 0);
	assert_int_equal(ns, now - 3600 * S);
	assert_int_equal(when_time("@1795585000.5", now, now, &ns), 0);
	assert_int_equal(ns, 1795585000 * S + S / 2);

	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(when_time("2026-11-24 14:00", now, now, &ns), 0);
	assert_int_equal(ns, 1795528800 * S);
	assert_int_equal(when_time("2026-11-24 14:00:30", now, now, &ns), 0);
	assert_int_equal(ns, 1795528830 * S);
	/* A time of day on the reference's day. */
	assert_int_equal(when_time("14:05", now, 1795528800 * S, &ns), 0);
	assert_int_equal(ns, 1795529100 * S);
	assert_int_equal(when_time("yesterday", now, now, &ns), -1);
	assert_int_equal(when_time("14:05 tomorrow", now, now, &ns), -1);
	assert_int_equal(when_time("-", now, now, &ns), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_write_query), cmocka_unit_test(test_retention),
	    cmocka_unit_test(test_unsent),	cmocka_unit_test(test_not_a_store),
	    cmocka_unit_test(test_when),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
