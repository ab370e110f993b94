/*
 * Unit tests of the util layer's tables, which every engine leans on:
 * htab (items told apart by the equality callback when their hashes
 * collide; keys 0 and 1; growth keeps every entry), u64map (keys that are addresses, pids and zero;
 * growth past many resizes; replacement) and strpool (equal strings share one copy, by pointer;
 * lengths without a NUL; NULL as ""; many distinct strings), term-safe (controls
 * escaped for a terminal, UTF-8 text kept) and hex (bytes to digits and
 * back, anything but exactly the digits refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/hash.h"
#include "util/hex.h"
#include "util/htab.h"
#include "util/strpool.h"
#include "util/term-safe.h"
#include "util/u64map.h"

static void sum_entry(void *ctx, uint64_t key, uint64_t val)
{
	uint64_t *sums = ctx;

	sums[0] += key;
	sums[1] += val;
	sums[2]++;
}

static void test_u64map_basic(void **state)
{
	struct u64map m;
	uint64_t v = 0;

	(void)state;
	u64map_init(&m);
	assert_int_equal(u64map_get(&m, 42, &v), 0);
	assert_int_equal(u64map_count(&m), 0);
	assert_int_equal(u64map_put(&m, 42, 7), 0);
	assert_int_equal(u64map_get(&m, 42, &v), 1);
	assert_int_equal(v, 7);
	/* Replacing keeps one entry. */
	assert_int_equal(u64map_put(&m, 42, 8), 0);
	assert_int_equal(u64map_get(&m, 42, &v), 1);
	assert_int_equal(v, 8);
	assert_int_equal(u64map_count(&m), 1);
	/* Key 0 is a key like any other, though it marks free slots. */
	assert_int_equal(u64map_get(&m, 0, &v), 0);
	assert_int_equal(u64map_put(&m, 0, 99), 0);
	assert_int_equal(u64map_get(&m, 0, &v), 1);
	assert_int_equal(v, 99);
	assert_int_equal(u64map_count(&m), 2);
	assert_int_equal(u64map_get(&m, 43, NULL), 0);
	/* Key 1 is apart from key 0, which the table underneath merges. */
	assert_int_equal(u64map_get(&m, 1, NULL), 0);
	assert_int_equal(u64map_put(&m, 1, 5), 0);
	assert_int_equal(u64map_get(&m, 0, &v), 1);
	assert_int_equal(v, 99);
	assert_int_equal(u64map_get(&m, 1, &v), 1);
	assert_int_equal(v, 5);
	/* each visits every entry once: keys 0 + 1 + 42, values 99 + 5 + 8. */
	uint64_t sums[3] = {0};
	u64map_each(&m, sum_entry, sums);
	assert_int_equal(sums[0], 43);
	assert_int_equal(sums[1], 112);
	assert_int_equal(sums[2], 3);
	u64map_release(&m);
	assert_int_equal(u64map_count(&m), 0);
}

static void test_u64map_many(void **state)
{
	struct u64map m;
	const uint64_t n = 100000;
	uint64_t v;

	(void)state;
	u64map_init(&m);
	/* Page-aligned addresses, the keys that scramble worst. */
	for (uint64_t i = 1; i <= n; i++)
		assert_int_equal(u64map_put(&m, 0x7f0000000000ULL + i * 4096, i), 0);
	assert_int_equal(u64map_count(&m), n);
	for (uint64_t i = 1; i <= n; i++) {
		assert_int_equal(u64map_get(&m, 0x7f0000000000ULL + i * 4096, &v), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(u64map_get(&m, 0x7f0000000000ULL + (n + 1) * 4096, &v), 0);
	assert_int_equal(u64map_get(&m, 0x7f0000000000ULL + 2048, &v), 0);
	u64map_release(&m);
}

static void test_strpool_interns(void **state)
{
	struct strpool p;
	char buf[32];

	(void)state;
	strpool_init(&p);
	const char *a = strpool_intern(&p, "burn_cpu");
	strcpy(buf, "burn_cpu");
	const char *b = strpool_intern(&p, buf);
	assert_non_null(a);
	assert_ptr_equal(a, b); /* one copy, compared by pointer */
	assert_ptr_not_equal(b, buf);
	assert_string_equal(a, "burn_cpu");
	/* A length without a NUL, inside a longer string. */
	const char *c = strpool_intern_len(&p, "burn_cpu_more", 8);
	assert_ptr_equal(c, a);
	const char *d = strpool_intern_len(&p, "burn_cpu_more", 9);
	assert_string_equal(d, "burn_cpu_");
	assert_ptr_not_equal(d, a);
	/* NULL is "". */
	const char *e = strpool_intern(&p, NULL);
	assert_string_equal(e, "");
	assert_ptr_equal(e, strpool_intern(&p, ""));
	strpool_release(&p);
}

static void test_strpool_many(void **state)
{
	struct strpool p;
	const char **first = malloc(20000 * sizeof(*first));
	char buf[32];

	(void)state;
	assert_non_null(first);
	strpool_init(&p);
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		first[i] = strpool_intern(&p, buf);
		assert_non_null(first[i]);
	}
	/* After many resizes every string is still found, as the same copy. */
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		assert_ptr_equal(strpool_intern(&p, buf), first[i]);
		assert_string_equal(first[i], buf);
	}
	strpool_release(&p);
	free(first);
}

static void test_hash_fnv1a(void **state)
{
	(void)state;
	/* The published FNV-1a test vectors: the colours of every
	 * flamegraph depend on the 32-bit one staying put. */
	assert_int_equal(hash_fnv1a32_str(""), 0x811c9dc5u);
	assert_int_equal(hash_fnv1a32_str("a"), 0xe40c292cu);
	assert_int_equal(hash_fnv1a32_str("foobar"), 0xbf9cf968u);
	assert_true(hash_fnv1a_str(HASH_FNV1A_INIT, "") == 0xcbf29ce484222325ULL);
	assert_true(hash_fnv1a_str(HASH_FNV1A_INIT, "a") == 0xaf63dc4c8601ec8cULL);
	assert_true(hash_fnv1a_str(HASH_FNV1A_INIT, "foobar") == 0x85944171f73967e8ULL);
	assert_true(hash_fnv1a_bytes(HASH_FNV1A_INIT, "foobar", 6) ==
		    hash_fnv1a_str(HASH_FNV1A_INIT, "foobar"));
	/* A separator keeps ("ab", "c") and ("a", "bc") apart. */
	uint64_t x =
	    hash_fnv1a_str(hash_fnv1a_value(hash_fnv1a_str(HASH_FNV1A_INIT, "ab"), 0), "c");
	uint64_t y =
	    hash_fnv1a_str(hash_fnv1a_value(hash_fnv1a_str(HASH_FNV1A_INIT, "a"), 0), "bc");
	assert_true(x != y);
}

/* Items are strings in an array; the key is a deliberately poor hash. */
static const char *const words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};

struct wanted {
	const char *const *items;
	const char *s;
};

static int same_word(const void *ctx, uint64_t index)
{
	const struct wanted *w = ctx;

	return strcmp(w->items[index], w->s) == 0;
}

static void test_htab_collisions(void **state)
{
	struct htab t;

	(void)state;
	htab_init(&t);
	assert_null(htab_find(&t, 7, NULL, NULL));
	/* Every word under the same key: only the callback tells them apart. */
	for (uint64_t i = 0; i < 5; i++) {
		struct wanted w = {words, words[i]};
		assert_null(htab_find(&t, 7, same_word, &w));
		assert_non_null(htab_add(&t, 7, i));
	}
	for (uint64_t i = 0; i < 5; i++) {
		struct wanted w = {words, words[i]};
		struct htab_slot *s = htab_find(&t, 7, same_word, &w);
		assert_non_null(s);
		assert_int_equal(s->val, i);
	}
	struct wanted none = {words, "zeta"};
	assert_null(htab_find(&t, 7, same_word, &none));
	assert_int_equal(htab_count(&t), 5);
	/* Keys 0 and 1 are one key: the callback still separates items. */
	assert_non_null(htab_add(&t, 0, 100));
	struct htab_slot *s = htab_find(&t, 1, NULL, NULL);
	assert_non_null(s);
	assert_int_equal(s->val, 100);
	htab_release(&t);
	assert_int_equal(htab_count(&t), 0);
}

static void test_htab_growth(void **state)
{
	struct htab t;

	(void)state;
	htab_init(&t);
	/* Page-aligned keys, the symbolizer's worst case for a plain mask. */
	for (uint64_t i = 1; i <= 100000; i++)
		assert_non_null(htab_add(&t, i << 12, i * 3));
	assert_int_equal(htab_count(&t), 100000);
	assert_true(t.cap >= 2 * 100000);
	for (uint64_t i = 1; i <= 100000; i++) {
		struct htab_slot *s = htab_find(&t, i << 12, NULL, NULL);
		assert_non_null(s);
		assert_int_equal(s->val, i * 3);
	}
	assert_null(htab_find(&t, 100001ULL << 12, NULL, NULL));
	htab_release(&t);
}

/* Names for a terminal: controls escaped, UTF-8 text kept, cut safely. */
static void test_term_safe(void **state)
{
	char buf[64];

	(void)state;
	const char *clean = "ns::f<int>(\xc3\xa9t\xc3\xa9)";
	assert_ptr_equal(term_safe(clean, buf, sizeof(buf)), clean);
	assert_string_equal(term_safe("a\033]0;x\007b\177", buf, sizeof(buf)),
			    "a\\x1b]0;x\\x07b\\x7f");
	/* U+009B, a C1 CSI in UTF-8; U+00A0 is text. */
	assert_string_equal(term_safe("\xc2\x9b"
				      "2J\xc2\xa0",
				      buf, sizeof(buf)),
			    "\\u009b2J\xc2\xa0");
	/* Cut at the buffer's end, never inside an escape. */
	assert_string_equal(term_safe("ab\033cd", buf, 5), "ab");
	assert_false(term_clean("\n"));
}

static void test_hex(void **state)
{
	(void)state;
	const uint8_t b[] = {0x00, 0x0f, 0xa5, 0xff};
	char s[2 * sizeof(b) + 1];
	uint8_t back[4];

	hex_of(b, sizeof(b), s);
	assert_string_equal(s, "000fa5ff");
	assert_int_equal(hex_bytes("000fa5ff", back, 4), 0);
	assert_memory_equal(back, b, 4);
	assert_int_equal(hex_bytes("000FA5FF", back, 4), 0);
	assert_memory_equal(back, b, 4);
	assert_int_equal(hex_bytes("000fa5f", back, 4), -1);   /* short */
	assert_int_equal(hex_bytes("000fa5ff0", back, 4), -1); /* long */
	assert_int_equal(hex_bytes("000fa5fg", back, 4), -1);
	assert_int_equal(hex_bytes(" 00fa5ff", back, 4), -1);
	assert_int_equal(hex_bytes("", back, 0), 0);
	hex_of(b, 0, s);
	assert_string_equal(s, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u64map_basic),
	    cmocka_unit_test(test_u64map_many),
	    cmocka_unit_test(test_strpool_interns),
	    cmocka_unit_test(test_strpool_many),
	    cmocka_unit_test(test_hash_fnv1a),
	    cmocka_unit_test(test_htab_collisions),
	    cmocka_unit_test(test_htab_growth),
	    cmocka_unit_test(test_term_safe),
	    cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
