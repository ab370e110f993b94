/*
 * Unit tests of the kernel symbol table, from crafted kallsyms files: a
 * symbol reaches to the next one, data symbols and malformed lines are
 * skipped, module names come from the "[mod]" suffix, a global alias wins
 * over a local one, modules out of address order are sorted, and a
 * kptr_restrict file (all zeros) gives an empty table.
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
#include <unistd.h>

#include "symbols/kallsyms.h"

static char path[64];

static int setup(void **state)
{
	snprintf(path, sizeof(path), "/tmp/recce-test-kallsyms-XXXXXX");
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

static struct kallsyms *load_text(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct kallsyms *k = kallsyms_load(path);
	assert_non_null(k);
	return k;
}

static void test_lookup(void **state)
{
	struct kallsyms *k = load_text("ffffffff81000000 t startup_64\n"
				       "ffffffff81000000 T _stext\n"
				       "ffffffff81000100 T do_one\n"
				       "ffffffff81000200 D some_data\n"
				       "ffffffff81000300 t do_two\n"
				       "ffffffff81000400 T last_vmlinux\n"
				       "garbage\n"
				       "ffffffff81000500 T\n"
				       "zzzz T bad_address\n"
				       "ffffffffc0000000 t mod_fn\t[mymod]\n"
				       "ffffffffc0000100 T mod_fn2\t[mymod]\n"
				       "ffffffffc0000200 t other_mod_fn\t[other]\n"
				       "ffffffffc0000300 T the_very_last\n");
	const char *module = NULL;
	uint64_t start = 0;

	/* Seven addresses with an end (two aliases share the first); the
	 * last has none, data is skipped. */
	assert_int_equal(kallsyms_count(k), 7);
	assert_null(kallsyms_lookup(k, 0xffffffff80ffffffULL, &module, &start));
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000050ULL, &module, &start), "_stext");
	assert_string_equal(module, "");
	assert_int_equal(start, 0xffffffff81000000ULL);
	/* do_one reaches over the data symbol to the next text symbol. */
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000250ULL, NULL, &start), "do_one");
	assert_int_equal(start, 0xffffffff81000100ULL);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff810003ffULL, NULL, NULL), "do_two");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0000010ULL, &module, NULL), "mod_fn");
	assert_string_equal(module, "mymod");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0000110ULL, &module, NULL), "mod_fn2");
	assert_string_equal(module, "mymod");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0000210ULL, &module, NULL),
			    "other_mod_fn");
	assert_string_equal(module, "other");
	/* Nothing is known to end the last symbol. */
	assert_null(kallsyms_lookup(k, 0xffffffffc0000310ULL, NULL, NULL));
	kallsyms_free(k);
}

/* Modules are listed in load order, not address order, and a module can
 * sit below the last vmlinux symbol's successor. */
static void test_unsorted(void **state)
{
	struct kallsyms *k = load_text("ffffffff81000000 T _stext\n"
				       "ffffffff81000100 T do_one\n"
				       "ffffffffc0002000 t late_fn\t[late]\n"
				       "ffffffffc0002100 t late_end\t[late]\n"
				       "ffffffffc0001000 t early_b\t[early]\n"
				       "ffffffffc0000f00 t early_a\t[early]\n"
				       "ffffffff81000080 t squeezed\n");
	const char *module = NULL;
	uint64_t start = 0;

	assert_int_equal(kallsyms_count(k), 6);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000090ULL, &module, &start), "squeezed");
	assert_string_equal(module, "");
	assert_int_equal(start, 0xffffffff81000080ULL);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000100ULL, NULL, NULL), "do_one");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0000f80ULL, &module, NULL), "early_a");
	assert_string_equal(module, "early");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0001fffULL, &module, NULL), "early_b");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0002000ULL, &module, NULL), "late_fn");
	assert_string_equal(module, "late");
	assert_null(kallsyms_lookup(k, 0xffffffffc0002100ULL, NULL, NULL));
	kallsyms_free(k);
}

static void test_restricted(void **state)
{
	struct kallsyms *k = load_text("0000000000000000 T _stext\n"
				       "0000000000000000 T do_one\n"
				       "0000000000000000 t mod_fn\t[mymod]\n");

	assert_int_equal(kallsyms_count(k), 0);
	assert_null(kallsyms_lookup(k, 0, NULL, NULL));
	assert_null(kallsyms_lookup(k, 0xffffffff81000000ULL, NULL, NULL));
	kallsyms_free(k);
}

static void test_unreadable(void **state)
{
	errno = 0;
	assert_null(kallsyms_load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

static void test_this_kernel(void **state)
{
	struct kallsyms *k = kallsyms_load(NULL);

	/* Readable everywhere; empty where kptr_restrict hides addresses. */
	assert_non_null(k);
	kallsyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unsorted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_restricted, setup, teardown),
	    cmocka_unit_test(test_unreadable),
	    cmocka_unit_test(test_this_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
