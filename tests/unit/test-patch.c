/*
 * Unit tests of what hot patching decides before it touches a process:
 * the registry of patches (patch/patch-registry.h) keeps every field
 * through a save and a load, removes its file with the last patch, and
 * refuses a line it cannot read; jumps into a function's first bytes are
 * found in its machine code (symbols/func-exits.h).
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

#include "patch/patch-registry.h"
#include "symbols/func-exits.h"

static char dir[64];

static void test_registry_round_trip(void **state)
{
	(void)state;
	struct patch_record in[2], *out;
	size_t n;

	memset(in, 0, sizeof(in));
	strcpy(in[0].func, "old_fibonacci");
	in[0].addr = 0x55d0c0de1850;
	in[0].len = 5;
	memcpy(in[0].orig, "\x41\x55\x41\x54\x55", 5);
	memcpy(in[0].code, "\xe9\x10\x20\x30\x40", 5);
	in[0].veneer = 0x55d0c0f00000;
	strcpy(in[0].lib, "/srv/fix/fast fibonacci.so");
	strcpy(in[0].newfunc, "fast_fibonacci");
	in[0].new_addr = 0x7f0000001100;
	in[0].since = 1795000000;
	in[0].uid = 1000;
	in[1] = in[0];
	strcpy(in[1].func, "shop::Basket::total");
	in[1].veneer = 0;

	assert_int_equal(patch_registry_save(dir, getpid(), in, 2), 0);
	assert_int_equal(patch_registry_load(dir, getpid(), &out, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(&out[0], &in[0], sizeof(in[0]));
	assert_memory_equal(&out[1], &in[1], sizeof(in[1]));
	free(out);

	/* The last undo removes the file; loading then finds no patch. */
	assert_int_equal(patch_registry_save(dir, getpid(), in, 0), 0);
	assert_int_equal(patch_registry_load(dir, getpid(), &out, &n), 0);
	assert_int_equal(n, 0);
	free(out);
}

static void test_registry_bad_line(void **state)
{
	(void)state;
	char path[256];
	struct patch_record *out;
	size_t n;

	assert_int_equal(patch_registry_path(dir, getpid(), path, sizeof(path)), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("old_fibonacci\tnot an address\n", f);
	fclose(f);
	assert_int_equal(patch_registry_load(dir, getpid(), &out, &n), -EBADMSG);
	assert_int_equal(n, 0);
	unlink(path);
	assert_int_equal(patch_registry_path(dir, 999999999, path, sizeof(path)), -ESRCH);
}

static void test_branch_into(void **state)
{
	(void)state;
	size_t at = 0;
	/* f: push rbp; mov ebx, edi; .L: dec ebx; jne .L; pop rbp; ret,
	 * at 0x1000: the loop's target lies at offset 3, inside the first 5. */
	static const uint8_t loop[] = {0x55, 0x89, 0xfb, 0xff, 0xcb, 0x75, 0xfc, 0x5d, 0xc3};
	assert_int_equal(func_branch_into(loop, sizeof(loop), 0x1000, 0x1001, 0x1005, &at), 1);
	assert_int_equal(at, 5);
	/* A call of itself lands on its first byte, which stays a jump's start. */
	static const uint8_t self[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0xe8,
				       0xf6, 0xff, 0xff, 0xff, 0x5d, 0xc3};
	assert_int_equal(func_branch_into(self, sizeof(self), 0x1000, 0x1001, 0x1005, &at), 0);
	static const uint8_t junk[] = {0x55, 0x0f, 0x0b, 0x06};
	assert_int_equal(func_branch_into(junk, sizeof(junk), 0x1000, 0x1001, 0x1005, &at),
			 -EILSEQ);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/recce-test-patch.%d/a/b", (int)getpid());
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_registry_round_trip),
	    cmocka_unit_test(test_registry_bad_line),
	    cmocka_unit_test(test_branch_into),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf /tmp/recce-test-patch.%d", (int)getpid());
	if (system(cmd) != 0)
		failed++;
	return failed;
}
