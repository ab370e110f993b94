/*
 * Unit tests of moving a function's first instructions into a trampoline
 * (inject/relocate.h): plain instructions are copied; a RIP-relative
 * operand, a short conditional jump and a call still reach their targets
 * from the new place, and a call returns into the original function; a
 * jump back into the moved bytes, loop and an undecodable byte are
 * refused; a target beyond 2 GiB of the new place is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "inject/relocate.h"

#define FROM 0x401000ull
#define TO   0x402000ull

static uint8_t out[RELOCATE_MAX];
static size_t len, taken;

/* Moves code's first 5 bytes or more from FROM to to. */
static int move(const uint8_t *code, size_t n, uint64_t to)
{
	memset(out, 0, sizeof(out));
	return relocate_entry(code, n, FROM, 5, to, out, sizeof(out), &len, &taken);
}

static int32_t rel_at(const uint8_t *b)
{
	int32_t r;
	memcpy(&r, b, 4);
	return r;
}

static void test_plain_copied(void **state)
{
	(void)state;
	/* push rbp; mov rbp, rsp; push rbx; sub rsp, 8 */
	static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x83, 0xec, 0x08};
	assert_int_equal(move(code, sizeof(code), TO), 0);
	assert_int_equal(taken, 5);
	assert_memory_equal(out, code, 5);
	assert_int_equal(out[5], 0xe9);
	assert_int_equal(TO + 10 + rel_at(out + 6), FROM + 5); /* back to the rest */
	assert_int_equal(len, 10);
}

static void test_rip_relative(void **state)
{
	(void)state;
	/* mov rax, [rip + 0x2e88]; add rax, rdi */
	static const uint8_t code[] = {0x48, 0x8b, 0x05, 0x88, 0x2e, 0, 0, 0x48, 0x01, 0xf8};
	assert_int_equal(move(code, sizeof(code), TO), 0);
	assert_int_equal(taken, 7);
	assert_memory_equal(out, code, 3);
	assert_int_equal(TO + 7 + rel_at(out + 3), FROM + 7 + 0x2e88);
}

static void test_short_jcc(void **state)
{
	(void)state;
	/* test rdi, rdi; js +8 */
	static const uint8_t code[] = {0x48, 0x85, 0xff, 0x78, 0x06, 0x48, 0x8d, 0x44};
	assert_int_equal(move(code, sizeof(code), TO), 0);
	assert_int_equal(taken, 5);
	assert_memory_equal(out, code, 3);
	assert_int_equal(out[3], 0x0f); /* js rel32 */
	assert_int_equal(out[4], 0x88);
	assert_int_equal(TO + 9 + rel_at(out + 5), FROM + 5 + 6);
}

static void test_call_returns_home(void **state)
{
	(void)state;
	/* push rbp; mov rbp, rsp; call +0x100 */
	static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0x00, 0x01, 0, 0};
	assert_int_equal(move(code, sizeof(code), TO), 0);
	assert_int_equal(taken, 9);
	/* push imm32 (low half), mov dword [rsp + 4], imm32 (high half) */
	assert_int_equal(out[4], 0x68);
	assert_int_equal((uint32_t)rel_at(out + 5), (uint32_t)(FROM + 9));
	assert_memory_equal(out + 9, "\xc7\x44\x24\x04", 4);
	assert_int_equal(rel_at(out + 13), 0);
	assert_int_equal(out[17], 0xe9); /* then jmp to the callee */
	assert_int_equal(TO + 22 + rel_at(out + 18), FROM + 9 + 0x100);
}

static void test_refusals(void **state)
{
	(void)state;
	/* jmp +0 lands inside the bytes moved: xor eax, eax; jmp short +0; nop; nop */
	static const uint8_t into[] = {0x31, 0xc0, 0xeb, 0x00, 0x90, 0x90, 0xc3};
	/* loop -2 has no 32-bit form */
	static const uint8_t loop[] = {0xe2, 0xfe, 0x90, 0x90, 0x90, 0x90};
	static const uint8_t bad[] = {0x0f, 0x0b, 0x06, 0x06, 0x06, 0x06};
	/* mov rax, [rip + 0] from 4 GiB away */
	static const uint8_t far[] = {0x48, 0x8b, 0x05, 0, 0, 0, 0};

	assert_int_equal(move(into, sizeof(into), TO), -EXDEV);
	assert_int_equal(move(loop, sizeof(loop), TO), -ENOTSUP);
	assert_int_equal(move(bad, sizeof(bad), TO), -EILSEQ);
	assert_int_equal(taken, 2); /* ud2 decodes; the byte after it does not */
	assert_int_equal(move(far, sizeof(far), FROM + (5ull << 30)), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_copied), cmocka_unit_test(test_rip_relative),
	    cmocka_unit_test(test_short_jcc),	 cmocka_unit_test(test_call_returns_home),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
