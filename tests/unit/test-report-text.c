/*
 * Unit tests of report-text.c: self and total per function and per line
 * (recursion counts once per sample in total), the hottest line of a
 * function, and the table's exact layout.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/stacks.h"
#include "writers/report-text.h"

/* main calls fib (line 30), which recurses (line 11) to its hot line 12,
 * and other (line 31), a function without line information. */
static struct stack_frame recursive[] = {
    {"main", "main.c", 30, "fib"},
    {"fib", "fib.c", 11, "fib"},
    {"fib", "fib.c", 11, "fib"},
    {"fib", "fib.c", 12, "fib"},
};
static struct stack_frame shallow[] = {
    {"main", "main.c", 30, "fib"},
    {"fib", "fib.c", 13, "fib"},
};
static struct stack_frame unknown[] = {
    {"main", "main.c", 31, "fib"},
    {"other", "", 0, "libother.so"},
};
static struct stack_entry entries[] = {
    {4, recursive, 3, NULL, 0},
    {2, shallow, 1, NULL, 0},
    {2, unknown, 2, NULL, 0},
};
static const struct stack_set set = {entries, 3, 6, 0, "samples", "count", NULL, NULL, NULL};

struct want {
	const char *name, *file;
	int64_t line, self, total;
};

/* Ranks the set and checks every row, in order. */
static void assert_rank(int lines, const struct want *want, size_t nwant)
{
	struct report_row *rows;
	size_t n;

	assert_int_equal(report_rank(&set, lines, &rows, &n), 0);
	assert_int_equal(n, nwant);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(rows[i].name, want[i].name);
		assert_string_equal(rows[i].file, want[i].file);
		assert_int_equal(rows[i].line, want[i].line);
		assert_int_equal(rows[i].self, want[i].self);
		assert_int_equal(rows[i].total, want[i].total);
	}
	if (!lines)
		assert_string_equal(rows[1].module, "libother.so");
	free(rows);
}

static void test_rank_functions(void **state)
{
	static const struct want want[] = {
	    /* fib is on the first stack three times: its total counts it once. */
	    {"fib", "fib.c", 12, 4, 4},
	    {"other", "", 0, 2, 2},
	    /* No self samples: the line of its hottest call. */
	    {"main", "main.c", 30, 0, 6},
	};
	assert_rank(0, want, 3);
}

static void test_rank_lines(void **state)
{
	static const struct want want[] = {
	    {"fib", "fib.c", 12, 3, 3},	  {"other", "", 0, 2, 2},     {"fib", "fib.c", 13, 1, 1},
	    {"main", "main.c", 30, 0, 4}, {"fib", "fib.c", 11, 0, 3}, {"main", "main.c", 31, 0, 2},
	};
	assert_rank(1, want, 6);
}

/* One interpreter loop whose samples come from two source files of one
 * object (a macro-generated body, an inlined header), and a function of
 * the same name in another object: the report has one row per (function,
 * object), at the hottest line, and the other object's apart. */
static void test_rank_one_row_per_function(void **state)
{
	static struct stack_frame a[] = {{"_PyEval_EvalFrameDefault", "ceval.c", 10, "python3"}};
	static struct stack_frame b[] = {
	    {"_PyEval_EvalFrameDefault", "generated_cases.c.h", 20, "python3"}};
	static struct stack_frame c[] = {{"_PyEval_EvalFrameDefault", "ceval.c", 10, "libpy.so"}};
	static struct stack_entry e[] = {
	    {1, a, 3, NULL, 0}, {1, b, 5, NULL, 0}, {1, c, 1, NULL, 0}};
	const struct stack_set two = {e, 3, 9, 0, "samples", "count", NULL, NULL, NULL};
	struct report_row *rows;
	size_t n;

	(void)state;
	assert_int_equal(report_rank(&two, 0, &rows, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].module, "python3");
	assert_int_equal(rows[0].self, 8);
	assert_string_equal(rows[0].file, "generated_cases.c.h"); /* the hottest line's */
	assert_int_equal(rows[0].line, 20);
	assert_string_equal(rows[1].module, "libpy.so");
	assert_int_equal(rows[1].self, 1);
	free(rows);
	/* By line, rows are source lines: the two files stay apart (and one
	 * file:line built into two objects is one line). */
	assert_int_equal(report_rank(&two, 1, &rows, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].file, "generated_cases.c.h");
	assert_int_equal(rows[0].self, 5);
	assert_string_equal(rows[1].file, "ceval.c");
	assert_int_equal(rows[1].self, 4);
	free(rows);
}

/* Runs report_text_write into a string the caller frees. */
static char *text_write(const struct stack_set *s, const struct report_text_opts *opts)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(report_text_write(out, s, opts), 0);
	fclose(out);
	return text;
}

static void test_table(void **state)
{
	const char *comments[] = {"command: ./fib 30", "lost: 0"};
	struct report_text_opts opts = {.top = 2, .comments = comments, .ncomments = 2};
	char *text = text_write(&set, &opts);

	assert_string_equal(text, "command: ./fib 30\n"
				  "lost: 0\n"
				  "total: 6 samples\n"
				  "showing the top 2 of 3 functions (-n 0 shows all)\n"
				  "\n"
				  "  self%  total%  samples  function  location\n"
				  " 66.67%  66.67%        4  fib       fib.c:12\n"
				  " 33.33%  33.33%        2  other     libother.so\n");
	free(text);

	opts = (struct report_text_opts){.lines = 1};
	text = text_write(&set, &opts);
	assert_non_null(strstr(text, "  self%  total%  samples  location     function\n"
				     " 50.00%  50.00%        3  fib.c:12     fib\n"));
	assert_non_null(strstr(text, "  0.00%  50.00%        0  fib.c:11     fib\n"));
	assert_null(strstr(text, "showing"));
	free(text);
}

static void test_header(void **state)
{
	struct stack_set cpu = set;
	struct report_text_opts opts = {0};

	cpu.type = "cpu";
	cpu.unit = "nanoseconds";
	cpu.total = 1500000000;
	cpu.dropped = 500000000;
	char *text = text_write(&cpu, &opts);
	assert_non_null(strstr(text, "total: 1.50s cpu\n"
				     "filters left out 500.00ms cpu (25.00% of 2.00s)\n"));
	free(text);

	struct stack_set none = {NULL, 0, 0, 5, "samples", "count", NULL, NULL, NULL};
	text = text_write(&none, &opts);
	assert_string_equal(text, "total: 0 samples\n"
				  "filters left out 5 samples (100.00% of 5)\n"
				  "no samples left after the filters\n");
	free(text);

	FILE *ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	assert_int_equal(report_text_write(ro, &set, &opts), -EIO);
	fclose(ro);
}

static void test_value_format(void **state)
{
	char buf[32];

	assert_string_equal(report_value_format(buf, sizeof(buf), 1234, "count"), "1234");
	assert_string_equal(report_value_format(buf, sizeof(buf), 999, "nanoseconds"), "999ns");
	assert_string_equal(report_value_format(buf, sizeof(buf), 10101010, "nanoseconds"),
			    "10.10ms");
	assert_string_equal(report_value_format(buf, sizeof(buf), -2500, "nanoseconds"), "-2.50us");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rank_functions), cmocka_unit_test(test_rank_lines),
	    cmocka_unit_test(test_table),	   cmocka_unit_test(test_header),
	    cmocka_unit_test(test_value_format),   cmocka_unit_test(test_rank_one_row_per_function),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
