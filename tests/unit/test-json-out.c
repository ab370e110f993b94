/*
 * Unit tests of the streaming JSON writer: the commas it places at every
 * depth, keys and values, line breaks, and strings that stay valid JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/json-out.h"

/* The text written by fn into a fresh writer. */
static char *written(void (*fn)(struct json_out *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json_out j;

	assert_non_null(f);
	json_out_init(&j, f);
	fn(&j);
	fclose(f);
	return text;
}

static void nested(struct json_out *j)
{
	json_object(j);
	json_key(j, "a");
	json_array(j);
	json_int(j, -1);
	json_uint(j, 18446744073709551615ULL);
	json_array(j);
	json_end(j);
	json_object(j);
	json_end(j);
	json_fixed(j, 2.25, 1);
	json_end(j);
	json_key(j, "b");
	json_string(j, "x\"y");
	json_key(j, "t");
	json_us(j, 1234567);
	json_key(j, "r");
	json_raw(j, "true");
	json_end(j);
}

static void test_commas_at_every_depth(void **state)
{
	(void)state;
	char *t = written(nested);
	assert_string_equal(t, "{\"a\":[-1,18446744073709551615,[],{},2.2],\"b\":\"x\\\"y\","
			       "\"t\":1234.567,\"r\":true}");
	free(t);
}

static void lines(struct json_out *j)
{
	json_array(j);
	for (int i = 0; i < 3; i++) {
		json_newline(j, "  ");
		json_int(j, i);
	}
	json_newline(j, "");
	json_end(j);
}

static void test_newlines(void **state)
{
	(void)state;
	char *t = written(lines);
	assert_string_equal(t, "[\n  0,\n  1,\n  2\n]");
	free(t);
}

static void bad_bytes(struct json_out *j)
{
	json_array(j);
	json_string(j, "a\xff\x01");
	json_bytes(j, "\xc3\xa9\"\x7f");
	json_end(j);
}

static void test_strings_stay_json(void **state)
{
	(void)state;
	char *t = written(bad_bytes);
	/* Text: UTF-8 checked; bytes: each one code point. */
	assert_string_equal(t, "[\"a\\ufffd\\u0001\",\"\\u00c3\\u00a9\\\"\\u007f\"]");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_commas_at_every_depth),
	    cmocka_unit_test(test_newlines),
	    cmocka_unit_test(test_strings_stay_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
