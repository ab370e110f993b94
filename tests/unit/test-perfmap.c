/*
 * Unit tests of perf-map loading from crafted files: the documented
 * format with and without 0x, malformed and over-long lines skipped,
 * later lines replacing earlier ones, nested entries, and the safety
 * checks on the file itself (owner, symlink, not a regular file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/perfmap.h"

static char dir[64], path[128];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/recce-test-perfmap-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/perf-1234.map", dir);
	return 0;
}

static int teardown(void **state)
{
	char other[160];

	unlink(path);
	snprintf(other, sizeof(other), "%s/link.map", dir);
	unlink(other);
	rmdir(dir);
	return 0;
}

static void write_map(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static struct perfmap *load_ok(const char *text)
{
	struct perfmap *m = NULL;

	write_map(text);
	assert_int_equal(perfmap_load(1234, getuid(), path, &m), 0);
	assert_non_null(m);
	return m;
}

static void test_lookup(void **state)
{
	struct perfmap *m = load_ok("0x7f0000001000 0x100 Elixir.Foo:bar/2\n"
				    "7f0000002000 80 LazyCompile:~hello /srv/app.js:12\n"
				    "7f0000003000\t10\ttabbed name\r\n");
	uint64_t start = 0;

	assert_int_equal(perfmap_count(m), 3);
	assert_null(perfmap_lookup(m, 0x7f0000000fffULL, &start));
	assert_string_equal(perfmap_lookup(m, 0x7f0000001000ULL, &start), "Elixir.Foo:bar/2");
	assert_int_equal(start, 0x7f0000001000ULL);
	assert_string_equal(perfmap_lookup(m, 0x7f00000010ffULL, NULL), "Elixir.Foo:bar/2");
	assert_null(perfmap_lookup(m, 0x7f0000001100ULL, NULL));
	/* Names keep their spaces; the line end goes. */
	assert_string_equal(perfmap_lookup(m, 0x7f000000207fULL, &start),
			    "LazyCompile:~hello /srv/app.js:12");
	assert_int_equal(start, 0x7f0000002000ULL);
	assert_null(perfmap_lookup(m, 0x7f0000002080ULL, NULL));
	assert_string_equal(perfmap_lookup(m, 0x7f0000003005ULL, NULL), "tabbed name");
	perfmap_free(m);
}

static void test_malformed(void **state)
{
	char *text = malloc(20000);

	assert_non_null(text);
	snprintf(text, 20000,
		 "xyz 10 not_hex\n"
		 "1000\n"
		 "1000 10\n"
		 "1000 10   \n"
		 "-1000 10 negative\n"
		 "+1000 10 plus\n"
		 " 1000 10 leading_space\n"
		 "1000 0 zero_size\n"
		 "ffffffffffffffff 10 wraps\n"
		 "10000000000000000 10 too_big\n"
		 "0x 10 no_digits\n"
		 "\n"
		 "2000 10 good\n"
		 "%08000d 10 overlong\n"
		 "3000 10 also_good\n",
		 0);
	struct perfmap *m = load_ok(text);

	assert_int_equal(perfmap_count(m), 2);
	assert_string_equal(perfmap_lookup(m, 0x2000, NULL), "good");
	assert_string_equal(perfmap_lookup(m, 0x3000, NULL), "also_good");
	assert_null(perfmap_lookup(m, 0x1000, NULL));
	assert_null(perfmap_lookup(m, 0, NULL));
	perfmap_free(m);
	free(text);
}

static void test_override_and_nesting(void **state)
{
	struct perfmap *m = load_ok("5000 100 old\n"
				    "6000 1000 outer\n"
				    "6100 100 inner\n"
				    "5000 80 new\n");

	/* A later line for the same start replaces the earlier one. */
	assert_int_equal(perfmap_count(m), 3);
	assert_string_equal(perfmap_lookup(m, 0x5010, NULL), "new");
	assert_null(perfmap_lookup(m, 0x5090, NULL));
	assert_string_equal(perfmap_lookup(m, 0x6150, NULL), "inner");
	assert_string_equal(perfmap_lookup(m, 0x6500, NULL), "outer");
	perfmap_free(m);
}

static void test_file_checks(void **state)
{
	struct perfmap *m = NULL;
	char link[160];

	assert_int_equal(perfmap_load(1234, getuid(), path, &m), -ENOENT);
	write_map("1000 10 f\n");

	/* A link, even to an acceptable file, is refused. */
	snprintf(link, sizeof(link), "%s/link.map", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(perfmap_load(1234, getuid(), link, &m), -ELOOP);

	/* A directory (or FIFO) is not a map file. */
	assert_int_equal(perfmap_load(1234, getuid(), dir, &m), -EINVAL);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(perfmap_load(1234, getuid(), path, &m), -EINVAL);
	assert_null(m);
}

static void test_owner(void **state)
{
	struct perfmap *m = NULL;
	const uid_t other = 12345, target = 23456;

	if (geteuid() != 0)
		skip(); /* chown needs root */
	write_map("1000 10 f\n");
	/* Root's file is trusted for any target. */
	assert_int_equal(perfmap_load(1234, target, path, &m), 0);
	perfmap_free(m);
	/* Another user's file is refused; the target's own is taken. */
	assert_int_equal(chown(path, other, other), 0);
	m = NULL;
	assert_int_equal(perfmap_load(1234, target, path, &m), -EPERM);
	assert_null(m);
	assert_int_equal(chown(path, target, target), 0);
	assert_int_equal(perfmap_load(1234, target, path, &m), 0);
	assert_string_equal(perfmap_lookup(m, 0x1008, NULL), "f");
	perfmap_free(m);
}

/* A forged map: more entries than the cap, and a name of 4,000 bytes.
 * Both are counted, the entries kept are looked up as before. */
static void test_caps(void **state)
{
	FILE *f = fopen(path, "w");
	char name[4001];
	struct perfmap *m = NULL;
	size_t dropped, cut;

	(void)state;
	assert_non_null(f);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	fprintf(f, "10 10 %s\n", name);
	for (unsigned long i = 1; i < 1000005; i++)
		fprintf(f, "%lx 10 f%lu\n", 0x100000 + i * 16, i);
	fclose(f);
	assert_int_equal(perfmap_load(1234, getuid(), path, &m), 0);
	perfmap_losses(m, &dropped, &cut);
	assert_int_equal(perfmap_count(m), 1000000);
	assert_int_equal(dropped, 5);
	assert_int_equal(cut, 1);
	assert_int_equal(strlen(perfmap_lookup(m, 0x18, NULL)), 512);
	assert_string_equal(perfmap_lookup(m, 0x100000 + 7 * 16, NULL), "f7");
	perfmap_free(m);
}

static void test_default_path(void **state)
{
	struct perfmap *m = NULL;
	char tmp[64];
	pid_t pid = getpid();

	snprintf(tmp, sizeof(tmp), "/tmp/perf-%d.map", (int)pid);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs("abc0 10 jitted\n", f);
	fclose(f);
	int rc = perfmap_load(pid, getuid(), NULL, &m);
	unlink(tmp);
	assert_int_equal(rc, 0);
	assert_string_equal(perfmap_lookup(m, 0xabc5, NULL), "jitted");
	perfmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_override_and_nesting, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_file_checks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
	    cmocka_unit_test(test_default_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
