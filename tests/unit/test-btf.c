/*
 * Unit tests of the BTF member lookup: on a blob built here, members at
 * their byte offsets, a bit-field and a missing member refused with
 * -ENOENT, every truncation and an unknown kind refused with -EBADMSG; on
 * the running kernel's BTF, task_struct's tgid where bpftool says it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <linux/btf.h>

#include "perf/btf.h"

/* A type record's info word: kind, kflag and vlen. */
#define INFO(kind, kflag, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(kflag) << 31 | (vlen))

/* "\0int\0s\0a\0b\0c\0t\0" */
static const char strs[] = "\0int\0s\0a\0b\0c\0t";
enum { S_INT = 1, S_S = 5, S_A = 7, S_B = 9, S_C = 11, S_T = 13 };

/* A blob: int; struct s { int a; int b; int c:3 (kflag) }; struct t {}
 * (empty); with the kind of the last type replaced by kind when nonzero. */
static size_t blob(unsigned char *out, unsigned kind)
{
	uint32_t types[64];
	size_t n = 0;

	types[n++] = S_INT; /* int */
	types[n++] = INFO(BTF_KIND_INT, 0, 0);
	types[n++] = 4;
	types[n++] = 32;  /* encoding: 32 bits */
	types[n++] = S_S; /* struct s, kflag, 3 members */
	types[n++] = INFO(BTF_KIND_STRUCT, 1, 3);
	types[n++] = 12;
	uint32_t members[3][3] = {{S_A, 1, 0}, {S_B, 1, 32}, {S_C, 1, (3u << 24) | 64}};
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 3; k++)
			types[n++] = members[i][k];
	types[n++] = S_T; /* struct t, no member */
	types[n++] = INFO(kind ? kind : BTF_KIND_STRUCT, 0, 0);
	types[n++] = 0;

	struct btf_header h = {
	    .magic = BTF_MAGIC,
	    .version = 1,
	    .hdr_len = sizeof(h),
	    .type_off = 0,
	    .type_len = (uint32_t)(n * 4),
	    .str_off = (uint32_t)(n * 4),
	    .str_len = sizeof(strs),
	};
	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), types, n * 4);
	memcpy(out + sizeof(h) + n * 4, strs, sizeof(strs));
	return sizeof(h) + n * 4 + sizeof(strs);
}

static void test_members(void **state)
{
	unsigned char b[512];
	size_t len = blob(b, 0);
	uint32_t off = 99;

	assert_int_equal(btf_member_offset(b, len, "s", "a", &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(btf_member_offset(b, len, "s", "b", &off), 0);
	assert_int_equal(off, 4);
	assert_int_equal(btf_member_offset(b, len, "s", "c", &off), -ENOENT);
	assert_int_equal(btf_member_offset(b, len, "s", "d", &off), -ENOENT);
	assert_int_equal(btf_member_offset(b, len, "t", "a", &off), -ENOENT);
	assert_int_equal(btf_member_offset(b, len, "u", "a", &off), -ENOENT);
}

static void test_malformed(void **state)
{
	unsigned char b[512];
	size_t len = blob(b, 0);
	uint32_t off;

	/* Every cut short of the whole fails cleanly, never reads past. */
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, b, cut);
		int rc = btf_member_offset(copy, cut, "t", "x", &off);
		assert_true(rc == -EBADMSG || rc == -ENOENT);
		free(copy);
	}
	b[0] ^= 1; /* not the magic */
	assert_int_equal(btf_member_offset(b, len, "s", "a", &off), -EBADMSG);
	len = blob(b, 31); /* a kind this reader does not know, before t */
	assert_int_equal(btf_member_offset(b, len, "t", "a", &off), -EBADMSG);
	assert_int_equal(btf_member_offset(b, len, "s", "b", &off), 0);
}

static void test_kernel(void **state)
{
	FILE *p = popen("bpftool btf dump file " BTF_VMLINUX " 2>/dev/null", "r");
	char line[512];
	int in = 0;
	long want = -1;

	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (line[0] == '[')
			in = strstr(line, "STRUCT 'task_struct' ") != NULL;
		else if (in && want < 0 && strstr(line, "'tgid' "))
			want = strtol(strstr(line, "bits_offset=") + 12, NULL, 10) / 8;
	}
	pclose(p);
	assert_true(want > 0); /* bpftool read it */
	uint32_t off = 0;
	assert_int_equal(btf_file_member_offset(BTF_VMLINUX, "task_struct", "tgid", &off), 0);
	assert_int_equal(off, want);
	assert_int_equal(btf_file_member_offset("/nonexistent", "task_struct", "tgid", &off),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_members),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
