/*
 * Unit tests of the tracing engines that need no live process: the --if
 * parser and evaluator (with error columns), the limits and circuit
 * breaker, the latency histogram, pattern parsing (usdt: and py: too,
 * and USDT argument notes) and edit distance,
 * returned objects as text, and trace files (round trip of every packed
 * field, wrapping, corruption, format 1).
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
#include <zlib.h>

#include "trace/trace-args.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"
#include "trace/trace-hist.h"
#include "trace/trace-limits.h"
#include "trace/trace-pack.h"
#include "trace/trace-report.h"
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

	/* The flood look: 5 per 100 ms again. Within a window of its last
	 * look it waits; over a span of windows it takes the mean of the
	 * events seen and lost: 4 seen and 5 lost over 200 ms is 4.5 a
	 * window; then 3 seen and 9 lost over the next 200 ms, 6 a window,
	 * trips, though no window ever saw more than 5 events. */
	trace_limits_init(&l, 0, 0, 5, 100, 0);
	assert_int_equal(trace_limits_flood(&l, 99 * ms, 100, 100), TRACE_RUNNING);
	assert_int_equal(trace_limits_flood(&l, 200 * ms, 4, 5), TRACE_RUNNING);
	/* 2 seen and 5 lost 99 ms later would be 7 a window: too soon to say. */
	assert_int_equal(trace_limits_flood(&l, 299 * ms, 6, 10), TRACE_RUNNING);
	assert_int_equal(trace_limits_flood(&l, 400 * ms, 7, 14), TRACE_STOP_BREAKER);
	assert_int_equal(l.stop, TRACE_STOP_BREAKER);

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
	/* A library by its stem, whatever version its file carries. */
	const char *objects[][3] = {
	    /* pattern, a path it names, a path it does not */
	    {"libc:f", "/lib/x86_64-linux-gnu/libc-2.31.so", "/usr/lib/libc-client.so.2007e"},
	    {"libc:f", "/lib/libc-2.31.so", "/usr/lib/libcrypt-1.so"},
	    {"libdw.so.1:f", "/usr/lib/libdw-0.188.so", "/usr/lib/libdwarf.so.1"},
	    {"libdw.so.1:f", "/usr/lib/libdw-0.188.so", "/usr/lib/libelf-0.188.so"},
	    {"libLLVM:f", "/usr/lib/libLLVM-14.so.1", "/usr/bin/libLLVM-14"},
	};
	trace_pattern_release(&p);
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		assert_int_equal(trace_pattern_parse(objects[i][0], &p), 0);
		assert_true(trace_pattern_match_object(&p, objects[i][1]));
		assert_false(trace_pattern_match_object(&p, objects[i][2]));
		trace_pattern_release(&p);
	}

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
	const char *bad[] = {
	    "usdt:", "usdt:x", "usdt::x", "usdt:x:", "usdt::x:y", "usdt:a:b:c:d", "py:", "py:a:b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(trace_pattern_parse(bad[i], &p), -EINVAL);
	/* Arguments named and typed from the first; an empty entry keeps one. */
	assert_int_equal(
	    trace_pattern_parse("usdt:postgresql:query__start( query : str ,, n:hex)", &p), 0);
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

/* A record that uses every field the format packs. */
static struct trace_record full_record(uint64_t i)
{
	struct trace_record r = make_call((long)i * 1000003, i % 2 ? "client-1" : "");

	r.kind = i % 3 ? TRACE_CALL : TRACE_RETURN;
	r.ret_kind = TRACE_ARG_OBJECT;
	r.flags = (uint32_t)(i % 16);
	r.time_ns = 1700000000000000000ULL + i * 977 - (i % 4) * 5000; /* not in order */
	r.duration_ns = i * 31;
	r.ret = ~i;
	r.regs[0] = (uint64_t)r.args[0].value;
	r.regs[2] = 0x7ffd00001000ULL + i * (i % 3);
	r.regs[5] = i % 5 ? 0 : UINT64_MAX;
	r.args[1].value = 0x55aa00000000ULL + i; /* not its register */
	r.args[1].flags = TRACE_STR_TRUNCATED;
	r.pid = (uint32_t)(4000 + i % 2);
	r.tid = (uint32_t)(4000 + i % 7);
	r.arity = i % 5 ? 2 : -1;
	snprintf(r.function, sizeof(r.function), "app:fn_%u", (unsigned)(i % 3));
	snprintf(r.caller, sizeof(r.caller), i % 2 ? "main+0x%x" : "", (unsigned)i);
	snprintf(r.ret_text, sizeof(r.ret_text), "{a=%u, b=\"x\"}", (unsigned)i);
	return r;
}

struct kept {
	struct trace_record r[64];
	size_t count;
};

static int keep(const struct trace_record *r, void *ctx)
{
	struct kept *k = ctx;

	if (k->count < 64)
		k->r[k->count] = *r;
	k->count++;
	return 0;
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

static void test_file_roundtrip_and_corruption(void **state)
{
	char path[128];
	struct trace_writer *w;
	struct trace_file_info info;
	static struct kept k;
	long block_end[40];
	(void)state;

	snprintf(path, sizeof(path), "%s/one.bin", tmpdir);
	assert_int_equal(trace_writer_new(path, 0, 0, 42, &w), 0);
	/* Records 0-29 in three blocks of ten. */
	for (uint64_t i = 0; i < 30; i++) {
		struct trace_record r = full_record(i);
		assert_int_equal(trace_writer_write(w, &r), 0);
		assert_int_equal(r.seq, i + 1);
		if (i % 10 == 9) {
			assert_int_equal(trace_writer_flush(w), 0);
			block_end[i / 10] = file_size(path);
		}
	}
	assert_int_equal(trace_writer_close(w), 0);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(k.count, 30);
	for (uint64_t i = 0; i < 30; i++) {
		struct trace_record want = full_record(i);
		want.seq = i + 1;
		assert_memory_equal(&k.r[i], &want, sizeof(want));
	}
	assert_int_equal(info.version, 3);
	assert_int_equal(info.first_seq, 1);
	assert_int_equal(info.last_seq, 30);
	assert_int_equal(info.pid, 42);
	assert_false(info.damaged);
	char here[TRACE_HOST_MAX] = "";
	gethostname(here, sizeof(here) - 1);
	assert_string_equal(info.host, here); /* who wrote it */
	assert_false(info.clock_known);

	/* Brought here by recce --node: its host and clock written in. */
	assert_int_equal(trace_file_stamp(path, "web-3", -2500000000LL), 0);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(k.count, 30);
	assert_string_equal(info.host, "web-3");
	assert_true(info.clock_known);
	assert_int_equal(info.clock_offset_ns, -2500000000LL);

	/* The same records as format 2 wrote them (no host record): read. */
	char old[128];
	snprintf(old, sizeof(old), "%s/v2.bin", tmpdir);
	FILE *in = fopen(path, "rb"), *out = fopen(old, "wb");
	assert_true(in && out);
	uint8_t h[TRACE_FILE_HEADER_SIZE], buf[4096];
	assert_int_equal(fread(h, 1, sizeof(h), in), sizeof(h));
	uint16_t two = 2;
	memcpy(h + 8, &two, 2);
	memcpy(h + 10, &two, 2);
	uint32_t hcrc = (uint32_t)crc32(0L, h, 44);
	memcpy(h + 44, &hcrc, 4);
	fwrite(h, 1, sizeof(h), out);
	fseek(in, TRACE_FILE_HEADER_SIZE + 152, SEEK_SET);
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, got, out);
	fclose(in);
	fclose(out);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(old, keep, &k, &info), 0);
	assert_int_equal(info.version, 2);
	assert_int_equal(k.count, 30);
	assert_string_equal(info.host, "");
	assert_int_equal(trace_file_stamp(old, "web-3", 0), -EBADMSG); /* no room for it */
	unlink(old);

	/* Flip a byte in the third block: the first two are replayed. */
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, block_end[1] + 40, SEEK_SET);
	int c = fgetc(f);
	fseek(f, block_end[1] + 40, SEEK_SET);
	fputc(c ^ 0x5a, f);
	fclose(f);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(k.count, 20);
	assert_true(info.damaged);
	assert_int_equal(info.damage_offset, block_end[1]);
	assert_string_equal(info.damage, "a block of records fails its checksum");

	/* A torn block: everything before it. */
	assert_int_equal(truncate(path, block_end[0] + 30), 0);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(k.count, 10);
	assert_true(info.damaged);
	assert_int_equal(info.damage_offset, block_end[0]);

	/* Not a trace file. */
	f = fopen(path, "wb");
	fputs("hello, not a trace\n", f);
	fclose(f);
	assert_int_equal(trace_file_read(path, keep, &k, &info), -EBADMSG);
	unlink(path);
}

/* What a --fast trace of step(i, t) from four threads takes a call: its
 * names once, then tens of bytes a record. */
static void test_file_compact(void **state)
{
	char path[128];
	struct trace_writer *w;
	struct trace_file_info info;
	static struct kept k;
	(void)state;

	snprintf(path, sizeof(path), "%s/compact.bin", tmpdir);
	assert_int_equal(trace_writer_new(path, 0, 0, 42, &w), 0);
	for (uint64_t i = 0; i < 10000; i++) {
		struct trace_record r;
		memset(&r, 0, sizeof(r));
		r.kind = TRACE_CALL;
		r.time_ns = 1700000000000000000ULL + i * 250;
		r.pid = 42;
		r.tid = 42 + (uint32_t)(i / 500 % 4);
		r.arity = 2;
		trace_copy_str(r.function, sizeof(r.function), "tight:step");
		r.nargs = 2;
		r.regs[0] = i % 500;
		r.regs[1] = r.tid - 42;
		r.regs[2] = 0x7ffd12345678ULL;
		r.regs[3] = 0x55d0aa001000ULL;
		for (int a = 0; a < 2; a++) {
			trace_copy_str(r.args[a].name, sizeof(r.args[a].name), a ? "t" : "i");
			r.args[a].kind = TRACE_ARG_INT;
			r.args[a].value = r.regs[a];
		}
		assert_int_equal(trace_writer_write(w, &r), 0);
	}
	assert_int_equal(trace_writer_close(w), 0);
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(info.records, 10000);
	assert_true(file_size(path) - TRACE_FILE_HEADER_SIZE < 10000 * 24);
	unlink(path);
}

/* Records packed on their own come back in any order. */
static void test_pack_alone(void **state)
{
	struct trace_pack p;
	static uint8_t buf[30 * TRACE_PACK_MAX];
	int off[31] = {0};
	(void)state;

	trace_pack_init(&p);
	for (int i = 29; i >= 0; i--) {
		struct trace_record r = full_record((uint64_t)i);
		int n = trace_pack_put_alone(&p, &r, buf + off[29 - i]);
		assert_true(n > 0 && n <= TRACE_PACK_MAX);
		off[30 - i] = off[29 - i] + n;
	}
	for (int k = 0; k < 30; k++) {
		struct trace_record got, want = full_record((uint64_t)(29 - k));
		assert_int_equal(trace_pack_get_alone(&p, buf + off[k], buf + off[k + 1], &got), 0);
		assert_memory_equal(&got, &want, sizeof(want));
	}
	/* A name the pack never saw is not one. */
	struct trace_pack fresh;
	struct trace_record got;
	trace_pack_init(&fresh);
	assert_int_equal(trace_pack_get_alone(&fresh, buf, buf + off[1], &got), -EBADMSG);
	trace_pack_release(&fresh);
	trace_pack_release(&p);
}

static void report_add(struct trace_report *rep, int kind, const char *fn, uint64_t d)
{
	struct trace_record r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint16_t)kind;
	r.pid = r.tid = 7;
	r.duration_ns = d;
	trace_copy_str(r.function, sizeof(r.function), fn);
	assert_int_equal(trace_report_add(rep, &r), 0);
}

/* Sums by function: a recursive call's time once, own time less the
 * calls under it, a return whose call came before the trace. */
static void test_report(void **state)
{
	struct trace_report *rep = trace_report_new();
	size_t n;
	(void)state;

	assert_non_null(rep);
	report_add(rep, TRACE_CALL, "f", 0);
	report_add(rep, TRACE_CALL, "f", 0);
	report_add(rep, TRACE_RETURN, "f", 10);
	report_add(rep, TRACE_RETURN, "f", 30);
	report_add(rep, TRACE_RETURN, "g", 100); /* called before the trace */
	report_add(rep, TRACE_CALL, "h", 0);	 /* never returns */
	const struct trace_report_row *rows = trace_report_rows(rep, &n);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].function, "g");
	assert_int_equal(rows[0].calls, 1);
	assert_int_equal(rows[0].total_ns, 100);
	assert_int_equal(rows[0].self_ns, 70);
	assert_string_equal(rows[1].function, "f");
	assert_int_equal(rows[1].calls, 2);
	assert_int_equal(rows[1].total_ns, 30);
	assert_int_equal(rows[1].self_ns, 30);
	assert_int_equal(rows[1].max_ns, 30);
	assert_int_equal(trace_report_open(rep), 1);
	assert_int_equal(trace_report_returns(rep), 3);
	trace_report_free(rep);
}

/* A file of format 1, as recce wrote them before: a header and fixed
 * 1 KiB records, each with its CRC. */
static void test_file_format_1(void **state)
{
	char path[128];
	uint8_t h[TRACE_FILE_HEADER_SIZE] = {0};
	uint16_t version = 1;
	uint32_t size = TRACE_RECORD_SIZE, one = 1, pid = 77;
	struct trace_file_info info;
	static struct kept k;
	(void)state;

	memcpy(h, TRACE_FILE_MAGIC, 8);
	memcpy(h + 8, &version, 2);
	memcpy(h + 10, &version, 2);
	memcpy(h + 12, &size, 4);
	memcpy(h + 20, &one, 4);
	memcpy(h + 40, &pid, 4);
	uint32_t crc = (uint32_t)crc32(0L, h, 44);
	memcpy(h + 44, &crc, 4);
	snprintf(path, sizeof(path), "%s/v1.bin", tmpdir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(h, 1, sizeof(h), f);
	for (uint64_t i = 0; i < 3; i++) {
		struct trace_record r = full_record(i);
		r.seq = i + 1;
		r.crc = (uint32_t)crc32(0L, (const uint8_t *)&r + 4, sizeof(r) - 4);
		fwrite(&r, 1, sizeof(r), f);
	}
	fclose(f);
	memset(&k, 0, sizeof(k));
	assert_int_equal(trace_file_read(path, keep, &k, &info), 0);
	assert_int_equal(info.version, 1);
	assert_int_equal(info.pid, 77);
	assert_false(info.damaged);
	assert_int_equal(k.count, 3);
	assert_string_equal(k.r[2].ret_text, "{a=2, b=\"x\"}");
	assert_int_equal(k.r[1].args[0].value, 1000003);
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
	(void)state;

	snprintf(base, sizeof(base), "%s/wrap.bin", tmpdir);
	/* 3 files of 4 KiB; 400 records of about 100 bytes: the newest
	 * 80-120 remain, none lost between them. */
	assert_int_equal(trace_writer_new(base, TRACE_FILE_MIN_WRAP, 3, 1, &w), 0);
	for (uint64_t i = 0; i < 400; i++) {
		struct trace_record r = full_record(i);
		snprintf(r.ret_text, sizeof(r.ret_text), "%0*u", 60 + (int)(i % 40), (unsigned)i);
		assert_int_equal(trace_writer_write(w, &r), 0);
		if (i % 7 == 0)
			assert_int_equal(trace_writer_flush(w), 0);
	}
	assert_int_equal(trace_writer_count(w), 400);
	uint64_t kept = trace_writer_kept(w);
	assert_int_equal(trace_writer_close(w), 0);
	for (int i = 0; i < 3; i++) {
		static struct kept k;
		memset(&k, 0, sizeof(k));
		snprintf(name, sizeof(name), "%s.%d", base, i);
		assert_true(file_size(name) <= TRACE_FILE_MIN_WRAP);
		assert_int_equal(trace_file_read(name, keep, &k, &info), 0);
		assert_false(info.damaged);
		assert_int_equal(info.last_seq - info.first_seq + 1, info.records);
		total += info.records;
		if (info.records && info.first_seq < first)
			first = info.first_seq;
		if (info.last_seq > last)
			last = info.last_seq;
		/* Each file is read on its own, its names defined in it. */
		assert_string_equal(k.r[0].function, full_record(info.first_seq - 1).function);
		unlink(name);
	}
	assert_int_equal(last, 400);   /* the newest is kept */
	assert_int_equal(total, kept); /* as the writer counted */
	assert_int_equal(first, 400 - kept + 1);
	assert_true(kept > 60 && kept < 130);
	assert_int_equal(trace_writer_new(base, TRACE_FILE_MIN_WRAP - 1, 3, 1, &w),
			 -EINVAL); /* too small */
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/recce-test-trace.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cond_eval),
	    cmocka_unit_test(test_cond_errors),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_hist),
	    cmocka_unit_test(test_pattern),
	    cmocka_unit_test(test_file_roundtrip_and_corruption),
	    cmocka_unit_test(test_file_wrap),
	    cmocka_unit_test(test_file_format_1),
	    cmocka_unit_test(test_file_compact),
	    cmocka_unit_test(test_pack_alone),
	    cmocka_unit_test(test_report),
	    cmocka_unit_test(test_object_text),
	    cmocka_unit_test(test_usdt_patterns),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return rc;
}
