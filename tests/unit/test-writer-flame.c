/*
 * Unit tests of the flamegraph writer: stack sets built by hand, written to
 * memory, and the SVG read back through the attributes the writer promises
 * (data-name, data-value, the rect's x/y/width). Well-formedness is checked
 * with xmllint when it is installed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "writers/writer-flame.h"

#define FULL_WIDTH 1180.0 /* the image's 1200 pixels less 10 on each side */

/* Appends a "root;child;leaf" stack to set, which then owns its memory. */
static void add_stack(struct stack_set *set, const char *folded, int64_t value)
{
	struct stack_entry *e;
	char *copy = strdup(folded), *save = NULL;

	assert_non_null(copy);
	set->entries = realloc(set->entries, (set->n + 1) * sizeof(*set->entries));
	assert_non_null(set->entries);
	e = &set->entries[set->n++];
	memset(e, 0, sizeof(*e));
	e->value = value;
	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		e->frames = realloc(e->frames, (e->nframes + 1) * sizeof(*e->frames));
		assert_non_null(e->frames);
		e->frames[e->nframes++] = (struct stack_frame){strdup(tok), "", 0, ""};
	}
	free(copy);
	set->total += value;
}

static void set_free(struct stack_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		for (size_t k = 0; k < set->entries[i].nframes; k++)
			free((char *)set->entries[i].frames[k].name);
		free(set->entries[i].frames);
	}
	free(set->entries);
	memset(set, 0, sizeof(*set));
}

/* Writes set and returns the SVG as a string the caller frees. */
static char *write_svg(const struct stack_set *set, const struct flame_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(flame_write_svg(f, set, opts), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The frame element whose data-name is name (already escaped), or NULL. */
static const char *find_frame(const char *svg, const char *name)
{
	char key[512];

	snprintf(key, sizeof(key), "<g class=\"frame\" data-name=\"%s\"", name);
	return strstr(svg, key);
}

/* Reads attribute attr of the frame's <rect>. */
static double rect_attr(const char *svg, const char *name, const char *attr)
{
	const char *g = find_frame(svg, name), *rect, *p;
	char key[64];

	assert_non_null(g);
	rect = strstr(g, "<rect ");
	assert_non_null(rect);
	snprintf(key, sizeof(key), " %s=\"", attr);
	p = strstr(rect, key);
	assert_non_null(p);
	assert_true(p < strstr(rect, "/>"));
	return strtod(p + strlen(key), NULL);
}

static long long frame_value(const char *svg, const char *name)
{
	const char *g = find_frame(svg, name), *p;

	assert_non_null(g);
	p = strstr(g, "data-value=\"");
	assert_non_null(p);
	return strtoll(p + strlen("data-value=\""), NULL, 10);
}

static void assert_near(double got, double want)
{
	if (got < want - 0.011 || got > want + 0.011)
		fail_msg("got %.3f, want %.3f", got, want);
}

/* Runs xmllint on svg when it is installed; skips the test otherwise. */
static void assert_well_formed(const char *svg)
{
	char path[] = "/tmp/recce-test-flame-XXXXXX";
	char cmd[128];
	int fd;

	if (system("command -v xmllint >/dev/null 2>&1") != 0)
		skip();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, svg, strlen(svg)), (ssize_t)strlen(svg));
	close(fd);
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet %s", path);
	int status = system(cmd);
	unlink(path);
	assert_int_equal(status, 0);
}

static void test_width_proportional(void **state)
{
	struct stack_set set = {0};
	char *svg;

	add_stack(&set, "main;hot", 70);
	add_stack(&set, "main;cold", 20);
	add_stack(&set, "main", 10);
	svg = write_svg(&set, NULL);

	assert_near(rect_attr(svg, "all", "width"), FULL_WIDTH);
	assert_near(rect_attr(svg, "main", "width"), FULL_WIDTH);
	assert_near(rect_attr(svg, "hot", "width"), FULL_WIDTH * 0.7);
	assert_near(rect_attr(svg, "cold", "width"), FULL_WIDTH * 0.2);
	assert_true(rect_attr(svg, "hot", "width") > rect_attr(svg, "cold", "width"));
	assert_int_equal(frame_value(svg, "hot"), 70);
	assert_non_null(strstr(svg, "<title>hot (70 samples, 70.00%)</title>"));
	assert_non_null(strstr(svg, "<title>all (100 samples, 100.00%)</title>"));

	/* Children sit side by side in name order from their parent's left edge. */
	assert_near(rect_attr(svg, "cold", "x"), rect_attr(svg, "main", "x"));
	assert_near(rect_attr(svg, "hot", "x"), 10 + FULL_WIDTH * 0.2);
	/* Flame graph: callees above their callers. */
	assert_true(rect_attr(svg, "hot", "y") < rect_attr(svg, "main", "y"));
	assert_true(rect_attr(svg, "main", "y") < rect_attr(svg, "all", "y"));
	assert_non_null(strstr(svg, ">Flame Graph</text>"));
	assert_non_null(strstr(svg, "Total: 100 samples"));
	assert_well_formed(svg);
	free(svg);
	set_free(&set);
}

static void test_children_merged(void **state)
{
	struct stack_set set = {0};
	char *svg;

	add_stack(&set, "main;a;b", 5);
	add_stack(&set, "main;a;c", 5);
	add_stack(&set, "main;a;b", 5);
	add_stack(&set, "main;d;b", 5);
	svg = write_svg(&set, NULL);

	assert_int_equal(count(svg, "data-name=\"main\""), 1);
	assert_int_equal(count(svg, "data-name=\"a\""), 1);
	assert_int_equal(frame_value(svg, "a"), 15);
	/* "b" under "a" and "b" under "d" are different frames. */
	assert_int_equal(count(svg, "data-name=\"b\""), 2);
	assert_int_equal(frame_value(svg, "b"), 10); /* the first, under "a" */
	assert_near(rect_attr(svg, "a", "width"), FULL_WIDTH * 0.75);
	free(svg);
	set_free(&set);
}

static void test_names_escaped(void **state)
{
	struct stack_set set = {0};
	struct flame_opts opts = {"a <b> & \"c\"", "d's", 0, 0, 0};
	char *svg;

	add_stack(&set, "main;std::map<int, A&B>::find(\"k\", 'v')", 10);
	add_stack(&set, "main;bad\xff\x01utf8", 10);
	svg = write_svg(&set, &opts);

	assert_non_null(
	    find_frame(svg, "std::map&lt;int, A&amp;B&gt;::find(&quot;k&quot;, &apos;v&apos;)"));
	assert_null(strstr(svg, "map<int"));
	assert_null(strstr(svg, "A&B"));
	/* Bytes that XML cannot carry become U+FFFD. */
	assert_non_null(find_frame(svg, "bad\xef\xbf\xbd\xef\xbf\xbdutf8"));
	assert_non_null(strstr(svg, ">a &lt;b&gt; &amp; &quot;c&quot;</text>"));
	assert_non_null(strstr(svg, ">d&apos;s</text>"));
	assert_well_formed(svg);
	free(svg);
	set_free(&set);
}

static void test_tiny_frames_elided(void **state)
{
	struct stack_set set = {0};
	char *svg;

	add_stack(&set, "main;big", 10000);
	add_stack(&set, "main;tiny;tinier", 5); /* 0.05% of the total */
	svg = write_svg(&set, NULL);

	assert_null(find_frame(svg, "tiny"));
	assert_null(find_frame(svg, "tinier"));
	assert_int_equal(frame_value(svg, "main"), 10005);
	assert_near(rect_attr(svg, "main", "width"), FULL_WIDTH);
	assert_near(rect_attr(svg, "big", "width"), FULL_WIDTH * 10000 / 10005);
	assert_well_formed(svg);
	free(svg);
	set_free(&set);
}

static void test_icicle_root_on_top(void **state)
{
	struct stack_set set = {0};
	struct flame_opts opts = {NULL, NULL, 1, 0, 0};
	char *svg;

	add_stack(&set, "main;work;leaf", 3);
	svg = write_svg(&set, &opts);

	assert_true(rect_attr(svg, "all", "y") < rect_attr(svg, "main", "y"));
	assert_true(rect_attr(svg, "main", "y") < rect_attr(svg, "work", "y"));
	assert_true(rect_attr(svg, "work", "y") < rect_attr(svg, "leaf", "y"));
	assert_non_null(strstr(svg, ">Icicle Graph</text>"));
	assert_non_null(strstr(svg, "icicle: true"));
	assert_well_formed(svg);
	free(svg);
	set_free(&set);
}

static void test_empty(void **state)
{
	struct stack_set set = {0};
	char *svg = write_svg(&set, NULL);

	assert_non_null(strstr(svg, "no samples"));
	assert_null(strstr(svg, "class=\"frame\""));
	assert_well_formed(svg);
	free(svg);

	/* Entries that weigh nothing are no samples either. */
	add_stack(&set, "main", 0);
	svg = write_svg(&set, NULL);
	assert_non_null(strstr(svg, "no samples"));
	free(svg);
	set_free(&set);
}

static void test_self_contained(void **state)
{
	struct stack_set set = {0};
	char *svg;

	add_stack(&set, "main;old_fibonacci;old_fibonacci", 8);
	set.entries[0].frames[1].file = "ratchet.c";
	set.entries[0].frames[1].line = 40;
	svg = write_svg(&set, NULL);

	/* The namespace name is the only URL; nothing is fetched. */
	assert_int_equal(count(svg, "http"), 1);
	assert_non_null(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, "<!DOCTYPE"));
	assert_int_equal(count(svg, "<script"), 1);
	assert_null(strstr(svg, "<script src"));
	/* The viewer's controls and the hover location. */
	assert_non_null(strstr(svg, "id=\"details\""));
	assert_non_null(strstr(svg, ">Reset Zoom<"));
	assert_non_null(strstr(svg, ">Search<"));
	assert_non_null(strstr(svg, "data-loc=\"ratchet.c:40\""));
	assert_int_equal(count(svg, "data-name=\"old_fibonacci\""), 2);
	free(svg);
	set_free(&set);
}

static void test_value_wording(void **state)
{
	struct stack_set set = {0};
	char *svg;

	add_stack(&set, "main;work", 2500000);
	add_stack(&set, "main;rest", 7500000);
	set.type = "cpu";
	set.unit = "nanoseconds";
	svg = write_svg(&set, NULL);
	assert_non_null(strstr(svg, "<title>work (2.50 ms cpu, 25.00%)</title>"));
	assert_non_null(strstr(svg, "<title>all (10.00 ms cpu, 100.00%)</title>"));
	assert_non_null(strstr(svg, ">Total: 10.00 ms cpu</text>"));
	assert_int_equal(frame_value(svg, "work"), 2500000);
	free(svg);

	set.type = "alloc_space";
	set.unit = "bytes";
	svg = write_svg(&set, NULL);
	assert_non_null(strstr(svg, "<title>work (2500000 bytes alloc_space, 25.00%)</title>"));
	free(svg);

	set.type = "samples";
	set.unit = "count";
	svg = write_svg(&set, &(struct flame_opts){"T", "", 0, 0, 0});
	assert_non_null(strstr(svg, "<title>work (2500000 samples, 25.00%)</title>"));
	assert_null(strstr(svg, "id=\"subtitle\""));
	free(svg);
	set_free(&set);
}

/* Reads the frame's fill, "rgb(R,G,B)". */
static void frame_rgb(const char *svg, const char *name, int rgb[3])
{
	const char *g = find_frame(svg, name), *p;

	assert_non_null(g);
	p = strstr(g, "fill=\"rgb(");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

static void test_colours(void **state)
{
	struct stack_set set = {0};
	int native[3], kernel[3], jit[3], unknown[3], again[3];
	char *svg;

	add_stack(&set, "main;write;do_syscall_64", 10);
	add_stack(&set, "main;fib:fib/1", 10);
	add_stack(&set, "main;libc.so.6+0x1234", 10);
	for (size_t i = 0; i < set.n; i++) {
		for (size_t k = 0; k < set.entries[i].nframes; k++) {
			struct stack_frame *f = &set.entries[i].frames[k];

			f->module = "ratchet";
			f->file = "ratchet.c";
		}
	}
	set.entries[0].frames[2].module = "[kernel.kallsyms]";
	set.entries[0].frames[2].file = "";
	set.entries[1].frames[1].module = ""; /* named code in anonymous memory */
	set.entries[1].frames[1].file = "";
	set.entries[2].frames[1].module = "libc.so.6";
	set.entries[2].frames[1].file = "";
	svg = write_svg(&set, NULL);

	frame_rgb(svg, "main", native);
	frame_rgb(svg, "do_syscall_64", kernel);
	frame_rgb(svg, "fib:fib/1", jit);
	frame_rgb(svg, "libc.so.6+0x1234", unknown);
	assert_true(native[0] >= 205 && native[2] <= 55); /* warm */
	assert_true(kernel[2] > kernel[0]);		  /* aqua */
	assert_true(jit[1] >= 200 && jit[0] < 120);	  /* green */
	assert_true(unknown[0] == unknown[1] && unknown[1] == unknown[2]);
	free(svg);

	/* The colour depends on the name only: the same in every graph. */
	svg = write_svg(&set, &(struct flame_opts){NULL, NULL, 1, 0, 0});
	frame_rgb(svg, "main", again);
	assert_memory_equal(native, again, sizeof(native));
	free(svg);
	set_free(&set);
}

static void test_write_error(void **state)
{
	struct stack_set set = {0};
	FILE *full = fopen("/dev/full", "w");

	if (!full)
		skip();
	add_stack(&set, "main;work", 1);
	assert_int_equal(flame_write_svg(full, &set, NULL), -EIO);
	fclose(full);
	assert_int_equal(flame_write_svg(NULL, &set, NULL), -EINVAL);
	set_free(&set);
}

/* 10,000 samples of 100 frames each: merged, and the root holds them all. */
static void test_large(void **state)
{
	struct stack_set set = {0};
	static const char *names[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
	char *svg;

	set.entries = calloc(10000, sizeof(*set.entries));
	assert_non_null(set.entries);
	for (size_t i = 0; i < 10000; i++) {
		struct stack_entry *e = &set.entries[set.n++];

		e->nframes = 100;
		e->frames = calloc(100, sizeof(*e->frames));
		assert_non_null(e->frames);
		for (size_t k = 0; k < 100; k++)
			e->frames[k] =
			    (struct stack_frame){strdup(names[(i >> (k % 13)) % 5]), "", 0, ""};
		e->value = 1;
		set.total++;
	}
	svg = write_svg(&set, NULL);
	assert_int_equal(frame_value(svg, "all"), 10000);
	assert_well_formed(svg);
	free(svg);
	set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_width_proportional),
	    cmocka_unit_test(test_children_merged),
	    cmocka_unit_test(test_names_escaped),
	    cmocka_unit_test(test_tiny_frames_elided),
	    cmocka_unit_test(test_icicle_root_on_top),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_self_contained),
	    cmocka_unit_test(test_value_wording),
	    cmocka_unit_test(test_colours),
	    cmocka_unit_test(test_write_error),
	    cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
