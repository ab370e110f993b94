/*
 * Unit tests of shell quoting (util/shell): safe words stay bare, others
 * are single-quoted with quotes inside escaped, empty words are kept, and
 * what comes out reads back, through a real sh, as the same words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/shell.h"

static void test_quoting(void **state)
{
	const char *const argv[] = {"sh", "-c", "echo \"it's\" $HOME", "", "a/b.c:1,2"};
	char *s;

	(void)state;
	s = shell_join("recce", argv, 5);
	assert_string_equal(s, "recce sh -c 'echo \"it'\\''s\" $HOME' '' a/b.c:1,2");
	free(s);
	s = shell_join(NULL, argv, 2);
	assert_string_equal(s, "sh -c");
	free(s);
	s = shell_join(NULL, argv, 0);
	assert_string_equal(s, "");
	free(s);
}

static void test_round_trip(void **state)
{
	const char *const argv[] = {"printf", "%s|", "a b", "it's", "", "$x `y` \\z", "*"};
	char *s = shell_join(NULL, argv, 7);
	char out[256] = "";

	(void)state;
	assert_non_null(s);
	FILE *p = popen(s, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	pclose(p);
	assert_string_equal(out, "a b|it's||$x `y` \\z|*|");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quoting),
	    cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
