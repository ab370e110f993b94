/*
 * Unit tests of the util layer's tables, which every engine leans on:
 * u64map (keys that are addresses, pids and zero; growth past many
 * resizes; replacement) and strpool (equal strings share one copy, by
 * pointer; lengths without a NUL; NULL as ""; many distinct strings).
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
#include "util/strpool.h"
#include "util/u64map.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u64map_basic),    cmocka_unit_test(test_u64map_many),
	    cmocka_unit_test(test_strpool_interns), cmocka_unit_test(test_strpool_many),
	    cmocka_unit_test(test_hash_fnv1a),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
