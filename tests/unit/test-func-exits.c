/*
 * Unit tests of the return-site finder (symbols/func-exits) and of the
 * calls-in-flight bookkeeping (trace/trace-calls), on machine code written
 * out byte by byte: every ret is found, a jump out is a tail call and a
 * jump inside is not, conditional and indirect jumps out are told apart,
 * a byte that does not decode or an instruction cut by the function's
 * end refuses the function, and Go's stack check is stepped over. A call
 * or return proves exactly the frames above its stack pointer unwound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "symbols/func-exits.h"
#include "trace/trace-calls.h"

static void test_exits(void **state)
{
	/* At 0x1000, 32 bytes:
	 *  0: push rbp                 55
	 *  1: test edi, edi            85 ff
	 *  3: je +7 (to 12, inside)    74 07
	 *  5: jne rel32 -> 0x2000      0f 85 f5 0f 00 00   (conditional, out)
	 * 11: ret                      c3
	 * 12: jmp rel8 -> 1 (inside)   eb f3
	 * 14: jmp rax                  ff e0
	 * 16: jmp rel32 -> 0x3000      e9 eb 1f 00 00      (tail call)
	 * 21: ret 8                    c2 08 00
	 * 24: nop x8                   90 ...
	 */
	static const uint8_t code[32] = {0x55, 0x85, 0xff, 0x74, 0x07, 0x0f, 0x85, 0xf5,
					 0x0f, 0x00, 0x00, 0xc3, 0xeb, 0xf3, 0xff, 0xe0,
					 0xe9, 0xeb, 0x1f, 0x00, 0x00, 0xc2, 0x08, 0x00,
					 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
	struct func_exits e = {0};
	size_t bad = 99;

	(void)state;
	assert_int_equal(func_exits_find(code, sizeof(code), 0x1000, &e, &bad), 0);
	assert_int_equal(e.n, 5);
	const struct {
		uint32_t offset;
		uint8_t kind, length;
	} want[] = {{5, FUNC_EXIT_COND, 6},
		    {11, FUNC_EXIT_RET, 1},
		    {14, FUNC_EXIT_INDIRECT, 2},
		    {16, FUNC_EXIT_TAIL, 5},
		    {21, FUNC_EXIT_RET, 3}};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(e.v[i].offset, want[i].offset);
		assert_int_equal(e.v[i].kind, want[i].kind);
		assert_int_equal(e.v[i].length, want[i].length);
	}
	assert_int_equal(e.instructions, 17);
	func_exits_release(&e);
}

static void test_refused(void **state)
{
	/* 0x06 (push es) does not exist in 64-bit mode. */
	static const uint8_t invalid[] = {0x55, 0x48, 0x89, 0xe5, 0x06, 0xc3};
	/* A call rel32 cut after two of its bytes by the function's end. */
	static const uint8_t cut[] = {0x55, 0xc3, 0xe8, 0x00};
	struct func_exits e = {0};
	size_t bad = 0;

	(void)state;
	assert_int_equal(func_exits_find(invalid, sizeof(invalid), 0x1000, &e, &bad), -EILSEQ);
	assert_int_equal(bad, 4);
	assert_int_equal(func_exits_find(cut, sizeof(cut), 0x1000, &e, &bad), -EILSEQ);
	assert_int_equal(bad, 2);
	func_exits_release(&e);
}

static void test_go_entry(void **state)
{
	/* cmp rsp, [r14+0x10]; jbe rel32; sub rsp, 0x28 */
	static const uint8_t small[] = {0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0xf7,
					0x00, 0x00, 0x00, 0x48, 0x83, 0xec, 0x28};
	/* lea r12, [rsp-0x1a0]; cmp r12, [r14+0x10]; jbe rel32; sub rsp, 0x220 */
	static const uint8_t large[] = {0x4c, 0x8d, 0xa4, 0x24, 0x60, 0xfe, 0xff, 0xff, 0x4d,
					0x3b, 0x66, 0x10, 0x0f, 0x86, 0xc1, 0x00, 0x00, 0x00,
					0x48, 0x81, 0xec, 0x20, 0x02, 0x00, 0x00};
	/* A function without the check: push rbp; mov rbp, rsp; ret */
	static const uint8_t plain[] = {0x55, 0x48, 0x89, 0xe5, 0xc3};

	(void)state;
	assert_int_equal(func_go_entry(small, sizeof(small)), 10);
	assert_int_equal(func_go_entry(large, sizeof(large)), 18);
	assert_int_equal(func_go_entry(plain, sizeof(plain)), 0);
}

static void push(struct call_stack *st, int fn, uint64_t sp)
{
	st->calls[st->depth].fn = fn;
	st->calls[st->depth++].sp = sp;
}

static void test_live_depth(void **state)
{
	struct trace_calls c;

	(void)state;
	trace_calls_init(&c);
	struct call_stack *st = trace_calls_stack(&c, 42, 0, 7);
	assert_non_null(st);
	assert_ptr_equal(trace_calls_stack(&c, 42, 0, 7), st);
	/* A goroutine with the same number is another stack. */
	assert_ptr_not_equal(trace_calls_stack(&c, 42, 1, 7), trace_calls_stack(&c, 42, 0, 7));
	st = trace_calls_stack(&c, 42, 0, 7);
	push(st, 1, 0x7000);
	push(st, 2, 0x6f00);
	push(st, 3, 0x6e00);
	/* A return at the innermost frame's address ends only that frame. */
	assert_int_equal(trace_calls_live_depth(st, 0x6e00, 0), 3);
	/* A return at the middle frame's address proves the innermost gone. */
	assert_int_equal(trace_calls_live_depth(st, 0x6f00, 0), 2);
	/* A new call at the middle frame's address: both inner ones gone. */
	assert_int_equal(trace_calls_live_depth(st, 0x6f00, 1), 1);
	/* A call below every frame is nested in them all. */
	assert_int_equal(trace_calls_live_depth(st, 0x6d00, 1), 3);
	/* A return above every frame (a longjmp to main): all gone. */
	assert_int_equal(trace_calls_live_depth(st, 0x7100, 0), 0);
	trace_calls_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exits),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_go_entry),
	    cmocka_unit_test(test_live_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
