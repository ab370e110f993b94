/*
 * Unit tests of the tracing engines that need no live process: the --if
 * parser and evaluator (with error columns), the limits and circuit
 * breaker, the latency histogram, pattern parsing (usdt: and py: too,
 * and USDT argument notes) and edit distance,
 * returned objects as text, and trace files (round trip, wrapping,
 * corruption).
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

#include "trace/trace-args.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"
#include "trace/trace-hist.h"
#include "trace/trace-limits.h"
#include "trace/trace-pattern.h"
#include "symbols/usdt.h"
#include "util/x86-regs.h"

static struct trace_record make_call(long n, const char *name)
{
	struct trace_record r;

	memset(&r, 0, sizeof(r));
	r.kind = TRACE_CALL;
	r.nargs = 2;
	trace_copy_str(r.args[0].name, sizeof(r.args[0].name), "n");
	r.args[0].kind = TRACE_ARG_INT;
	r.args[0].value = (uint64_t)n;
	trace_copy_str(r.args[1].name, sizeof(r.args[1].name), "name");
	r.args[1].kind = TRACE_ARG_STR;
	trace_copy_str(r.args[1].str, sizeof(r.args[1].str), name);
	r.regs[0] = (uint64_t)n;
	r.regs[1] = 0x1000;
	return r;
}

static int eval(const char *text, long n, const char *name)
{
	struct trace_cond *c;
	struct trace_cond_error e;
	struct trace_record r = make_call(n, name);

	assert_int_equal(trace_cond_parse(text, &c, &e), 0);
	int v = trace_cond_eval(c, trace_record_lookup, &r);
	trace_cond_free(c);
	return v;
}

static void test_cond_eval(void **state)
{
	assert_true(eval("n > 30", 31, "x"));
	assert_false(eval("n > 30", 30, "x"));
	assert_true(eval("n >= 30 && n <= 30", 30, "x"));
	assert_false(eval("n < 30", 30, "x"));
	assert_true(eval("n < 30", 29, "x"));
	assert_false(eval("n >= 30", 29, "x"));
	assert_false(eval("n <= 30", 31, "x"));
	assert_true(eval("name == \"client-42\"", 1, "client-42"));
	assert_false(eval("name == \"client-42\"", 1, "client-4"));
	assert_true(eval("name != \"a\" || n == 0", 0, "a"));
	assert_true(eval("!(n < 0)", 5, "x"));
	assert_false(eval("!n", 5, "x"));
	assert_true(eval("n == -3", -3, "x"));
	assert_true(eval("arg1 == 0x1000 && arg0 == 7", 7, "x"));
	/* && binds tighter than ||. */
	assert_true(eval("n == 1 || n == 2 && n == 3", 1, "x"));
	assert_false(eval("(n == 1 || n == 2) && n == 3", 1, "x"));
	/* Unknown names and type mismatches are false, not errors. */
	assert_false(eval("nosuch == 1", 1, "x"));
	assert_false(eval("name == 1", 1, "1"));
	assert_true(eval("name == \"q\\\"x\"", 1, "q\"x"));
}

static void expect_error(const char *text, int column)
{
	struct trace_cond *c = NULL;
	struct trace_cond_error e = {0, NULL};

	assert_int_equal(trace_cond_parse(text, &c, &e), -EINVAL);
	assert_null(c);
	assert_non_null(e.message);
	if (e.column != column)
		fail_msg("'%s': column %d, expected %d (%s)", text, e.column, column, e.message);
}

static void test_cond_errors(void **state)
{
	expect_error("n >", 4);
	expect_error("n > 30 &&", 10);
	expect_error("n = 3", 3);
	expect_error("(n > 3", 7);
	expect_error("n > 3)", 6);
	expect_error("name == \"abc", 9);
	expect_error("n & m", 3);
	expect_error("n > 3x", 6);
	expect_error("", 1);
	expect_error("n > @", 5);
	/* A hostile depth is refused, not a stack overflow. */
	char deep[200];
	memset(deep, '(', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = 0;
	struct trace_cond *c;
	struct trace_cond_error e;
	assert_int_equal(trace_cond_parse(deep, &c, &e), -EINVAL);
	/* So is a run of 100,000 '!' (each was a level of recursion), and
	 * any text over the length cap; a short run still parses. */
	static char bangs[100002];
	memset(bangs, '!', sizeof(bangs) - 2);
	bangs[sizeof(bangs) - 2] = '1';
	assert_int_equal(trace_cond_parse(bangs, &c, &e), -EINVAL);
	assert_string_equal(e.message, "condition longer than 4096 characters");
	char *run = bangs + sizeof(bangs) - 2 - 2000;
	assert_int_equal(trace_cond_parse(run, &c, &e), -EINVAL);
	assert_string_equal(e.message, "condition too long");
	/* A short run still means what it says. */
	assert_false(eval(bangs + sizeof(bangs) - 2 - 3, 0, "x")); /* !!!1 */
	assert_true(eval("!! n", 5, "x"));
	assert_false(eval("! ! !n", 5, "x"));
}

static void test_limits(void **state)
{
	struct trace_limits l;
	const uint64_t ms = 1000000;

	trace_limits_init(&l, 3, 0, 0, 0, 0);
	assert_int_equal(trace_limits_event(&l, 1), TRACE_RUNNING);
	assert_int_equal(trace_limits_event(&l, 2), TRACE_RUNNING);
	assert_int_equal(trace_limits_event(&l, 3), TRACE_STOP_COUNT);
	assert_int_equal(trace_limits_event(&l, 4), TRACE_STOP_COUNT);
	assert_int_equal(l.count, 3);

	/* 5 per 100 ms: the 6th within one window trips; a new window
	 * starts afresh. */
	trace_limits_init(&l, 0, 0, 5, 100, 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(trace_limits_event(&l, (uint64_t)i * ms), TRACE_RUNNING);
	assert_int_equal(trace_limits_event(&l, 150 * ms), TRACE_RUNNING); /* new window */
	for (int i = 0; i < 4; i++)
		assert_int_equal(trace_limits_event(&l, (151 + (uint64_t)i) * ms), TRACE_RUNNING);
	assert_int_equal(trace_limits_event(&l, 160 * ms), TRACE_STOP_BREAKER);
	assert_int_equal(l.count, 10);

	trace_limits_init(&l, 10, 15000 * ms, 0, 0, 1000);
	assert_int_equal(trace_limits_tick(&l, 1000 + 14999 * ms), TRACE_RUNNING);
	assert_int_equal(trace_limits_tick(&l, 1000 + 15000 * ms), TRACE_STOP_TIME);
	trace_limits_stop(&l, TRACE_STOP_SIGNAL); /* the first reason stays */
	assert_int_equal(l.stop, TRACE_STOP_TIME);

	uint64_t n, m;
	assert_int_equal(trace_limits_parse_rate("5/1000", &n, &m), 0);
	assert_int_equal(n, 5);
	assert_int_equal(m, 1000);
	assert_int_equal(trace_limits_parse_rate("5", &n, &m), -EINVAL);
	assert_int_equal(trace_limits_parse_rate("0/10", &n, &m), -EINVAL);
	assert_int_equal(trace_limits_parse_rate("5/x", &n, &m), -EINVAL);
}

static void test_hist(void **state)
{
	static struct trace_hist h;

	trace_hist_init(&h);
	assert_int_equal(trace_hist_quantile(&h, 0.5), 0);
	for (uint64_t i = 1; i <= 100; i++)
		trace_hist_add(&h, i * 1000);
	assert_int_equal(h.count, 100);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 100000);
	assert_int_equal(trace_hist_quantile(&h, 0.5), 50000);
	assert_int_equal(trace_hist_quantile(&h, 0.99), 99000);
	/* 1000 ns is in bucket 9 ([512, 1024)), 100000 in bucket 16. */
	assert_int_equal(h.buckets[9], 1);
	assert_int_equal(h.buckets[16] > 0, 1);
	uint64_t total = 0;
	for (int b = 0; b < TRACE_HIST_BUCKETS; b++)
		total += h.buckets[b];
	assert_int_equal(total, 100);
	char buf[32];
	trace_format_duration(buf, sizeof(buf), 3410000000ULL);
	assert_string_equal(buf, "3.41 s");
}

static void test_pattern(void **state)
{
	struct trace_pattern p;

	assert_int_equal(trace_pattern_parse("libc.so.6:malloc", &p), 0);
	assert_string_equal(p.object, "libc.so.6");
	assert_string_equal(p.function, "malloc");
	assert_true(trace_pattern_match_object(&p, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_false(trace_pattern_match_object(&p, "/usr/lib/libm.so.6"));
	trace_pattern_release(&p);

	assert_int_equal(trace_pattern_parse("libc:mall*", &p), 0);
	assert_true(trace_pattern_match_object(&p, "/lib/libc.so.6"));
	assert_false(trace_pattern_match_object(&p, "/lib/libcrypt.so.1"));
	trace_pattern_release(&p);

	assert_int_equal(trace_pattern_parse("ns::f", &p), 0);
	assert_null(p.object);
	assert_string_equal(p.function, "ns::f");
	assert_true(trace_pattern_match_object(&p, "/any"));
	trace_pattern_release(&p);

	assert_int_equal(trace_pattern_parse(":f", &p), -EINVAL);
	assert_int_equal(trace_pattern_parse("obj:", &p), -EINVAL);

	/* Addresses: with their object, as written or as a report names. */
	assert_int_equal(trace_pattern_parse("memcached:0xcf20", &p), 0);
	assert_true(p.addressed);
	assert_int_equal(p.addr, 0xcf20);
	assert_string_equal(p.object, "memcached");
	trace_pattern_release(&p);
	assert_int_equal(trace_pattern_parse("memcached!0xcf20-0xdfd3", &p), 0);
	assert_true(p.addressed);
	assert_int_equal(p.addr, 0xcf20);
	assert_string_equal(p.object, "memcached");
	trace_pattern_release(&p);
	assert_int_equal(trace_pattern_parse("0xcf20", &p), -EINVAL);
	/* Not addresses: globs and names that only start like one. */
	const char *names[] = {"m:0x", "m:0xcf20*", "m:0xcf20-0xcf00", "m:0xcf20-", "m!0xg1"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(trace_pattern_parse(names[i], &p), 0);
		assert_false(p.addressed);
		trace_pattern_release(&p);
	}

	assert_int_equal(trace_edit_distance("old_fibonaci", "old_fibonacci", 10), 1);
	assert_int_equal(trace_edit_distance("malloc", "malloc", 10), 0);
	assert_int_equal(trace_edit_distance("kitten", "sitting", 10), 3);
	assert_int_equal(trace_edit_distance("a", "abcdefghijk", 4), 4); /* capped */
}

/* usdt: and py: patterns, and the notes' argument strings. */
static void test_usdt_patterns(void **state)
{
	struct trace_pattern p;
	struct usdt_arg a;

	assert_int_equal(trace_pattern_parse("usdt:python:function__*", &p), 0);
	assert_int_equal(p.kind, TRACE_PATTERN_USDT);
	assert_null(p.object);
	assert_string_equal(p.provider, "python");
	assert_string_equal(p.function, "function__*");
	trace_pattern_release(&p);
	assert_int_equal(trace_pattern_parse("usdt:libstdc++:libstdcxx:throw", &p), 0);
	assert_string_equal(p.object, "libstdc++");
	assert_string_equal(p.provider, "libstdcxx");
	assert_string_equal(p.function, "throw");
	trace_pattern_release(&p);
	const char *bad[] = {"usdt:", "usdt:x", "usdt::x", "usdt:x:", "usdt::x:y", "usdt:a:b:c:d",
			     "py:",   "py:a:b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(trace_pattern_parse(bad[i], &p), -EINVAL);
	/* Arguments named and typed from the first; an empty entry keeps one. */
	assert_int_equal(trace_pattern_parse("usdt:postgresql:query__start( query : str ,, n:hex)", &p),
			 0);
	assert_string_equal(p.function, "query__start");
	assert_int_equal(p.spec.n, 3);
	assert_string_equal(p.spec.a[0].name, "query");
	assert_int_equal(p.spec.a[0].type, TRACE_USDT_STR);
	assert_string_equal(p.spec.a[1].name, "");
	assert_int_equal(p.spec.a[1].type, TRACE_USDT_AS_NOTE);
	assert_string_equal(p.spec.a[2].name, "n");
	assert_int_equal(p.spec.a[2].type, TRACE_USDT_HEX);
	trace_pattern_release(&p);
	const char *bad_specs[] = {"usdt:a:b(x:text)", "usdt:a:b(x", "usdt:a:b(1x)",
				   "usdt:a:b(a,b,c,d,e,f,g)", "usdt:a:b(x-y)"};
	for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++)
		assert_int_equal(trace_pattern_parse(bad_specs[i], &p), -EINVAL);
	assert_int_equal(trace_pattern_parse("py:app.handle_*", &p), 0);
	assert_int_equal(p.kind, TRACE_PATTERN_PY);
	assert_string_equal(p.function, "app.handle_*");
	trace_pattern_release(&p);

	assert_int_equal(usdt_arg_parse("8@%rbp", 6, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_REG);
	assert_int_equal(a.reg, X86_RBP);
	assert_int_equal(a.size, 8);
	assert_false(a.is_signed);
	assert_int_equal(usdt_arg_parse("-4@%eax", 7, &a), 0);
	assert_int_equal(a.reg, X86_RAX);
	assert_int_equal(a.size, 4);
	assert_true(a.is_signed);
	assert_int_equal(usdt_arg_parse("-4@112(%rsp)", 12, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_MEM);
	assert_int_equal(a.reg, X86_RSP);
	assert_int_equal(a.value, 112);
	assert_int_equal(usdt_arg_parse("8@-144(%rbp)", 12, &a), 0);
	assert_int_equal(a.value, -144);
	assert_int_equal(usdt_arg_parse("1@(%r12)", 8, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_MEM);
	assert_int_equal(a.reg, X86_R12);
	assert_int_equal(a.value, 0);
	assert_int_equal(usdt_arg_parse("4@$-5", 5, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_CONST);
	assert_int_equal(a.value, -5);
	assert_int_equal(usdt_arg_parse("2@%r11w", 7, &a), 0);
	assert_int_equal(a.reg, X86_R11);
	/* Placed but not understood: an index register, a name unknown. */
	assert_int_equal(usdt_arg_parse("8@8(%rax,%rbx,8)", 16, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_UNKNOWN);
	assert_int_equal(usdt_arg_parse("8@%xmm0", 7, &a), 0);
	assert_int_equal(a.kind, USDT_ARG_UNKNOWN);
	/* Not SIZE@OPERAND at all. */
	assert_int_equal(usdt_arg_parse("%rax", 4, &a), -EINVAL);
	assert_int_equal(usdt_arg_parse("3@%rax", 6, &a), -EINVAL);
	assert_int_equal(usdt_arg_parse("x@%rax", 6, &a), -EINVAL);
}

static char tmpdir[64];

static struct trace_record numbered(uint64_t i)
{
	struct trace_record r = make_call((long)i, "x");

	r.time_ns = 1000 + i;
	r.pid = 42;
	snprintf(r.function, sizeof(r.function), "t:f");
	return r;
}

struct got {
	uint64_t n[64];
	size_t count;
};

static int collect(const struct trace_record *r, void *ctx)
{
	struct got *g = ctx;

	if (g->count < 64)
		g->n[g->count] = r->args[0].value;
	g->count++;
	return 0;
}

static void test_file_roundtrip_and_corruption(void **state)
{
	char path[128];
	struct trace_writer *w;
	struct trace_file_info info;
	struct got g = {{0}, 0};

	snprintf(path, sizeof(path), "%s/one.bin", tmpdir);
	assert_int_equal(trace_writer_new(path, 0, 0, 42, &w), 0);
	for (uint64_t i = 0; i < 5; i++) {
		struct trace_record r = numbered(i);
		assert_int_equal(trace_writer_write(w, &r), 0);
	}
	assert_int_equal(trace_writer_close(w), 0);
	assert_int_equal(trace_file_read(path, collect, &g, &info), 0);
	assert_int_equal(g.count, 5);
	assert_int_equal(g.n[4], 4);
	assert_int_equal(info.first_seq, 1);
	assert_int_equal(info.last_seq, 5);
	assert_int_equal(info.pid, 42);
	assert_false(info.damaged);

	/* Flip a byte in the third record: the first two are replayed. */
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, TRACE_FILE_HEADER_SIZE + 2 * TRACE_RECORD_SIZE + 300, SEEK_SET);
	fputc(0x5a, f);
	fclose(f);
	memset(&g, 0, sizeof(g));
	assert_int_equal(trace_file_read(path, collect, &g, &info), 0);
	assert_int_equal(g.count, 2);
	assert_true(info.damaged);
	assert_int_equal(info.damage_offset, TRACE_FILE_HEADER_SIZE + 2 * TRACE_RECORD_SIZE);

	/* A truncated file: everything before the torn record. */
	assert_int_equal(truncate(path, TRACE_FILE_HEADER_SIZE + TRACE_RECORD_SIZE + 100), 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(trace_file_read(path, collect, &g, &info), 0);
	assert_int_equal(g.count, 1);
	assert_true(info.damaged);

	/* Not a trace file. */
	f = fopen(path, "wb");
	fputs("hello, not a trace\n", f);
	fclose(f);
	assert_int_equal(trace_file_read(path, collect, &g, &info), -EBADMSG);
	unlink(path);
}

static void add_member(struct trace_ret_object *o, const char *name, uint16_t off, uint8_t kind,
		       uint8_t size)
{
	trace_copy_str(o->m[o->nmembers].name, sizeof(o->m[0].name), name);
	o->m[o->nmembers].offset = off;
	o->m[o->nmembers].kind = kind;
	o->m[o->nmembers].size = size;
	o->nmembers++;
	if (off + size > o->size)
		o->size = (uint16_t)(off + size);
}

static void test_object_text(void **state)
{
	struct trace_ret_object o;
	uint8_t obj[64] = {0};
	char out[160];

	(void)state;
	/* A std::string: its text quoted, escaped, and marked when cut. */
	memset(&o, 0, sizeof(o));
	o.string = 1;
	o.size = 16;
	trace_args_format_object(&o, obj, 16, (const uint8_t *)"key-7", 5, out, sizeof(out));
	assert_string_equal(out, "\"key-7\"");
	trace_args_format_object(&o, obj, 16, (const uint8_t *)"a\"b\x1b]0;x\a", 9, out,
				 sizeof(out));
	assert_string_equal(out, "\"a\\\"b\\x1b]0;x\\x07\"");
	uint8_t longer[64];
	memset(longer, 'x', sizeof(longer));
	trace_args_format_object(&o, obj, 16, longer, 1000, out, sizeof(out));
	assert_int_equal(strlen(out), 1 + 64 + 1 + 3);
	assert_string_equal(out + 65, "\"...");
	/* Cut by the buffer: still closed, never half an escape. */
	memset(longer, 0x01, sizeof(longer));
	trace_args_format_object(&o, obj, 16, longer, 64, out, 24);
	assert_true(strlen(out) < 24);
	assert_string_equal(out + strlen(out) - 4, "\"...");
	assert_int_equal((strlen(out) - 5) % 4, 0);
	/* Unreadable text: nothing, so that the address is shown instead. */
	trace_args_format_object(&o, obj, 16, NULL, 5, out, sizeof(out));
	assert_string_equal(out, "");

	/* A struct: members by their types, floats exact and short. */
	memset(&o, 0, sizeof(o));
	add_member(&o, "id", 0, TRACE_ARG_INT, 8);
	add_member(&o, "price", 8, TRACE_ARG_FLOAT, 8);
	add_member(&o, "qty", 16, TRACE_ARG_INT, 4);
	add_member(&o, "open", 20, TRACE_ARG_BOOL, 1);
	add_member(&o, "ratio", 24, TRACE_ARG_FLOAT, 4);
	int64_t id = -5;
	double price = 0.07;
	int32_t qty = -3;
	float ratio = 0.1f;
	memcpy(obj, &id, 8);
	memcpy(obj + 8, &price, 8);
	memcpy(obj + 16, &qty, 4);
	obj[20] = 1;
	memcpy(obj + 24, &ratio, 4);
	trace_args_format_object(&o, obj, o.size, NULL, 0, out, sizeof(out));
	assert_string_equal(out, "{id=-5, price=0.07, qty=-3, open=true, ratio=0.1}");
	o.more = 1;
	trace_args_format_object(&o, obj, o.size, NULL, 0, out, sizeof(out));
	assert_string_equal(out, "{id=-5, price=0.07, qty=-3, open=true, ratio=0.1, ...}");
	/* Fewer bytes read than described, or a small buffer: the members
	 * that fit, then "...". */
	trace_args_format_object(&o, obj, 12, NULL, 0, out, sizeof(out));
	assert_string_equal(out, "{id=-5, ...}");
	trace_args_format_object(&o, obj, o.size, NULL, 0, out, 25);
	assert_string_equal(out, "{id=-5, price=0.07, ...}");
	trace_args_format_object(&o, obj, o.size, NULL, 0, out, 24);
	assert_string_equal(out, "{id=-5, ...}");
}

static void test_file_wrap(void **state)
{
	char base[128], name[160];
	struct trace_writer *w;
	struct trace_file_info info;
	uint64_t first = UINT64_MAX, last = 0, total = 0;

	snprintf(base, sizeof(base), "%s/wrap.bin", tmpdir);
	/* 3 files of 2 records each; 11 records: the newest 5 or 6 remain. */
	assert_int_equal(
	    trace_writer_new(base, TRACE_FILE_HEADER_SIZE + 2 * TRACE_RECORD_SIZE, 3, 1, &w), 0);
	for (uint64_t i = 0; i < 11; i++) {
		struct trace_record r = numbered(i);
		assert_int_equal(trace_writer_write(w, &r), 0);
	}
	assert_int_equal(trace_writer_count(w), 11);
	assert_int_equal(trace_writer_close(w), 0);
	for (int i = 0; i < 3; i++) {
		struct got g = {{0}, 0};
		snprintf(name, sizeof(name), "%s.%d", base, i);
		assert_int_equal(trace_file_read(name, collect, &g, &info), 0);
		assert_false(info.damaged);
		total += info.records;
		if (info.records && info.first_seq < first)
			first = info.first_seq;
		if (info.last_seq > last)
			last = info.last_seq;
		unlink(name);
	}
	assert_int_equal(last, 11); /* the newest is kept */
	assert_int_equal(first, 7); /* the oldest kept: files hold 7-8, 9-10, 11 */
	assert_int_equal(total, 5);
	assert_int_equal(trace_writer_new(base, 100, 3, 1, &w), -EINVAL); /* too small */
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/recce-test-trace.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cond_eval), cmocka_unit_test(test_cond_errors),
	    cmocka_unit_test(test_limits),    cmocka_unit_test(test_hist),
	    cmocka_unit_test(test_pattern),   cmocka_unit_test(test_file_roundtrip_and_corruption),
	    cmocka_unit_test(test_file_wrap), cmocka_unit_test(test_object_text),
	    cmocka_unit_test(test_usdt_patterns),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
