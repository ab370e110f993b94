/*
 * Unit tests of the .gopclntab reader: a table of two functions built
 * here in each layout Go has used (1.2, 1.16, 1.18 and 1.20), read back
 * with exact ranges and names; and tables that lie about their sizes or
 * offsets, refused without reading outside them; and the step out of a
 * frame at each pc, by its stack offsets or by what the runtime's
 * special functions are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "symbols/gopclntab.h"

struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *t, size_t at, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		t->b[at + i] = (uint8_t)(v >> (8 * i));
	if (at + size > t->n)
		t->n = at + size;
}

static void put_name(struct buf *t, size_t at, const char *s)
{
	memcpy(t->b + at, s, strlen(s) + 1);
	if (at + strlen(s) + 1 > t->n)
		t->n = at + strlen(s) + 1;
}

/* Two functions, main.a at 0x401000-0x401040 and main.b up to 0x401100,
 * in the layout of magic. */
static void build(struct buf *t, uint32_t magic)
{
	memset(t, 0, sizeof(*t));
	put(t, 0, magic, 4);
	t->b[6] = 1;
	t->b[7] = 8;
	put(t, 8, 2, 8); /* nfunc */
	if (magic == 0xfffffffb) {
		/* Pairs of pointers at 16; records and names from the start. */
		put(t, 16, 0x401000, 8), put(t, 24, 200, 8);
		put(t, 32, 0x401040, 8), put(t, 40, 220, 8);
		put(t, 48, 0x401100, 8);
		put(t, 200, 0x401000, 8), put(t, 208, 300, 4);
		put(t, 220, 0x401040, 8), put(t, 228, 310, 4);
		put_name(t, 300, "main.a"), put_name(t, 310, "main.b");
		return;
	}
	int go118 = magic != 0xfffffffa;
	unsigned hdr = go118 ? 8 + 8 * 8 : 8 + 7 * 8;
	if (go118)
		put(t, 24, 0x400000, 8); /* textStart */
	put(t, go118 ? 32 : 24, 300, 8); /* the names */
	put(t, go118 ? 64 : 56, hdr, 8); /* the pairs; records after them */
	unsigned e = go118 ? 4 : 8;	 /* entry size */
	uint64_t base = go118 ? 0x400000 : 0;
	put(t, hdr, 0x401000 - base, e), put(t, hdr + e, 100, e);
	put(t, hdr + 2 * e, 0x401040 - base, e), put(t, hdr + 3 * e, 120, e);
	put(t, hdr + 4 * e, 0x401100 - base, e);
	put(t, hdr + 100, 0x401000 - base, e), put(t, hdr + 100 + e, 0, 4);
	put(t, hdr + 120, 0x401040 - base, e), put(t, hdr + 120 + e, 7, 4);
	put_name(t, 300, "main.a"), put_name(t, 307, "main.b");
}

struct seen {
	int n;
	uint64_t lo[4], hi[4];
	char name[4][16];
};

static int collect(void *arg, uint64_t lo, uint64_t hi, const char *name)
{
	struct seen *s = arg;

	if (s->n < 4) {
		s->lo[s->n] = lo, s->hi[s->n] = hi;
		strncpy(s->name[s->n], name, sizeof(s->name[0]) - 1);
	}
	s->n++;
	return 0;
}

static void test_every_layout(void **state)
{
	static const uint32_t magics[] = {0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1};
	struct buf t;

	(void)state;
	for (size_t m = 0; m < 4; m++) {
		struct seen s = {0};
		build(&t, magics[m]);
		assert_int_equal(gopclntab_functions(t.b, t.n, collect, &s), 2);
		assert_int_equal(s.n, 2);
		assert_int_equal(s.lo[0], 0x401000);
		assert_int_equal(s.hi[0], 0x401040);
		assert_string_equal(s.name[0], "main.a");
		assert_int_equal(s.lo[1], 0x401040);
		assert_int_equal(s.hi[1], 0x401100);
		assert_string_equal(s.name[1], "main.b");
	}
}

static void test_lies_refused(void **state)
{
	struct buf t;
	struct seen s = {0};

	(void)state;
	build(&t, 0xfffffff0);
	put(&t, 8, 1000000, 8); /* more functions than the table holds */
	assert_int_equal(gopclntab_functions(t.b, t.n, collect, &s), -EINVAL);
	build(&t, 0xfffffff0);
	put(&t, 64, 1ULL << 60, 8); /* the pairs far outside */
	assert_int_equal(gopclntab_functions(t.b, t.n, collect, &s), -EINVAL);
	build(&t, 0xfffffff0);
	assert_int_equal(gopclntab_functions(t.b, 80, collect, &s), -EINVAL); /* cut in its pairs */
	s.n = 0;
	assert_int_equal(gopclntab_functions(t.b, 303, collect, &s), 0); /* in its names */
	build(&t, 0xfffffffb);
	put(&t, 208, 5000, 4); /* a name outside: that function is left out */
	s.n = 0;
	assert_int_equal(gopclntab_functions(t.b, t.n, collect, &s), 1);
	assert_string_equal(s.name[0], "main.b");
	t.b[0] = 0; /* not a table */
	assert_int_equal(gopclntab_functions(t.b, t.n, collect, &s), -EINVAL);
	assert_int_equal(gopclntab_functions(t.b, 8, collect, &s), -EINVAL);
}

/* A table inside a section, after other data (as an external linker
 * puts it in .data.rel.ro): found at its offset; a magic with no table
 * behind it, one not 8-byte aligned, and Go 1.2's are passed over. */
static void test_found_inside(void **state)
{
	static uint8_t sec[2048];
	struct buf t;

	(void)state;
	memset(sec, 0, sizeof(sec));
	build(&t, 0xfffffff1);
	memcpy(sec + 64, t.b, 8);    /* a lone header: its parts are not there */
	memcpy(sec + 300, t.b, t.n); /* a whole table, not aligned */
	memcpy(sec + 1024, t.b, t.n);
	assert_int_equal(gopclntab_find(sec, sizeof(sec)), 1024);
	struct seen s = {0};
	assert_int_equal(gopclntab_functions(sec + 1024, sizeof(sec) - 1024, collect, &s), 2);
	assert_string_equal(s.name[1], "main.b");
	assert_int_equal(gopclntab_find(sec, 1024 + 16), -ENOENT); /* cut */
	build(&t, 0xfffffffb);
	memset(sec, 0, sizeof(sec));
	memcpy(sec + 1024, t.b, t.n);
	assert_int_equal(gopclntab_find(sec, sizeof(sec)), -ENOENT);
}

/* Go 1.20's layout with full records: main.a, whose frame grows by 24
 * bytes after its first 4 and shrinks back at 0x30; the runtime's
 * goexit (by its wrapper's name), systemstack, asyncPreempt; and main.w,
 * flagged as writing SP. */
static size_t build_frames(uint8_t *b, size_t cap)
{
	static const char *const names[] = {"main.a", "runtime.goexit.abi0", "runtime.systemstack",
					    "runtime.asyncPreempt", "main.w"};
	static const uint32_t entry[] = {0x1000, 0x1040, 0x1050, 0x1080, 0x1100, 0x1120};
	struct buf t;
	const unsigned hdr = 72, names_at = 400, pctab = 600;

	memset(&t, 0, sizeof(t));
	put(&t, 0, 0xfffffff1, 4);
	t.b[6] = 1;
	t.b[7] = 8;
	put(&t, 8, 5, 8);	  /* nfunc */
	put(&t, 24, 0x400000, 8); /* textStart */
	put(&t, 32, names_at, 8);
	put(&t, 56, pctab, 8);
	put(&t, 64, hdr, 8); /* the pairs; records at offsets from them */
	size_t name_off = 0;
	for (unsigned i = 0; i < 5; i++) {
		unsigned rec = 60 + 48 * i;
		put(&t, hdr + 8 * i, entry[i], 4);
		put(&t, hdr + 8 * i + 4, rec, 4);
		put(&t, hdr + rec, entry[i], 4);
		put(&t, hdr + rec + 4, name_off, 4);
		put(&t, hdr + rec + 4 + 12, i == 0 ? 1 : 20, 4); /* pcsp */
		t.b[hdr + rec + 41] = i == 4 ? 2 : 0;		 /* flag: SPWRITE */
		put_name(&t, names_at + name_off, names[i]);
		name_off += strlen(names[i]) + 1;
	}
	put(&t, hdr + 40, entry[5], 4);
	/* main.a: 0 for 4 bytes, 24 to 0x30, 0 to its end; the others 0 for
	 * 0x80 bytes (zigzag value deltas, pc deltas). */
	static const uint8_t a[] = {2, 4, 48, 0x2c, 47, 0x10, 0};
	static const uint8_t flat[] = {2, 0x80, 1, 0};
	memcpy(t.b + pctab + 1, a, sizeof(a));
	memcpy(t.b + pctab + 20, flat, sizeof(flat));
	t.n = pctab + 20 + sizeof(flat) > t.n ? pctab + 20 + sizeof(flat) : t.n;
	assert_true(t.n <= cap);
	memcpy(b, t.b, t.n);
	return t.n;
}

static void test_frame_steps(void **state)
{
	uint8_t b[1024];
	size_t n = build_frames(b, sizeof(b));
	int64_t sp = -1;

	(void)state;
	assert_int_equal(gopclntab_step(b, n, 0x401000, &sp), GOPCLNTAB_FRAME);
	assert_int_equal(sp, 0);
	assert_int_equal(gopclntab_step(b, n, 0x401003, &sp), GOPCLNTAB_FRAME);
	assert_int_equal(sp, 0);
	assert_int_equal(gopclntab_step(b, n, 0x401004, &sp), GOPCLNTAB_FRAME);
	assert_int_equal(sp, 24);
	assert_int_equal(gopclntab_step(b, n, 0x40102f, &sp), GOPCLNTAB_FRAME);
	assert_int_equal(sp, 24);
	assert_int_equal(gopclntab_step(b, n, 0x401030, &sp), GOPCLNTAB_FRAME);
	assert_int_equal(sp, 0);
	assert_int_equal(gopclntab_step(b, n, 0x401048, &sp), GOPCLNTAB_OUTERMOST);
	assert_int_equal(gopclntab_step(b, n, 0x401050, &sp), GOPCLNTAB_SWITCH);
	assert_int_equal(gopclntab_step(b, n, 0x401090, &sp), GOPCLNTAB_INJECTED);
	assert_int_equal(sp, 0);
	assert_int_equal(gopclntab_step(b, n, 0x401110, &sp), GOPCLNTAB_SWITCH);
	assert_int_equal(gopclntab_step(b, n, 0x401120, &sp), -ENOENT); /* past the text */
	assert_int_equal(gopclntab_step(b, n, 0x400fff, &sp), -ENOENT);
	/* A value no frame has (negative, odd, huge) is a lying table. */
	b[600 + 1 + 2] = 49; /* -25 */
	assert_int_equal(gopclntab_step(b, n, 0x401010, &sp), -EINVAL);
	b[600 + 1 + 2] = 50; /* +25: not a whole word */
	assert_int_equal(gopclntab_step(b, n, 0x401010, &sp), -EINVAL);
	/* A table cut in its pc-value tables. */
	assert_int_equal(gopclntab_step(b, 601, 0x401010, &sp), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_layout),
	    cmocka_unit_test(test_lies_refused),
	    cmocka_unit_test(test_found_inside),
	    cmocka_unit_test(test_frame_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
