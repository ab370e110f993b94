/*
 * Unit tests of writer-folded.c: equal stacks merged, lines sorted, names
 * made safe for the format, frameless samples kept as "[unknown]".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "profile/stacks.h"
#include "writers/writer-folded.h"

static struct stack_frame ab[] = {{"a", "", 0, ""}, {"b", "x.c", 1, ""}};
static struct stack_frame ab2[] = {{"a", "", 0, ""}, {"b", "x.c", 2, ""}};
static struct stack_frame odd[] = {{"a", "", 0, ""}, {"c;x\ny", "", 0, ""}};
static struct stack_frame root[] = {{"a", "", 0, ""}};

/* Writes set and returns the text, which the caller frees. */
static char *folded_text(const struct stack_set *set)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(folded_write(out, set), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static void test_folded(void **state)
{
	struct stack_entry entries[] = {
	    {2, ab, 2, NULL, 0},   {2, odd, 1, NULL, 0},  {2, ab2, 3, NULL, 0},
	    {0, NULL, 4, NULL, 0}, {1, root, 1, NULL, 0},
	};
	struct stack_set set = {entries, 5, 11, 0, "samples", "count", NULL, NULL, NULL};
	char *text = folded_text(&set);

	/* Frames are merged by name: lines 1 and 2 of b are one stack. */
	assert_string_equal(text, "[unknown] 4\n"
				  "a 1\n"
				  "a;b 5\n"
				  "a;c_x_y 1\n");
	free(text);

	FILE *ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	assert_int_equal(folded_write(ro, &set), -EIO);
	fclose(ro);
}

static void test_empty(void **state)
{
	struct stack_set set = {NULL, 0, 0, 0, "samples", "count", NULL, NULL, NULL};
	char *text = folded_text(&set);

	assert_string_equal(text, "");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
