/*
 * Unit tests of the return-site finder (symbols/func-exits) and of the
 * calls-in-flight bookkeeping (trace/trace-calls), on machine code written
 * out byte by byte: every ret is found, a jump out is a tail call and a
 * jump inside is not, conditional and indirect jumps out are told apart,
 * a byte that does not decode or an instruction cut by the function's
 * end refuses the function, and Go's stack check is stepped over. Where
 * the target stops on a conditional or indirect exit, the flags and
 * registers decide whether it leaves. A call
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
	assert_int_equal(e.v[0].cond, 5); /* jne */
	assert_int_equal(e.v[2].jump.reg, X86_RAX);
	func_exits_release(&e);
}

/* Memory of a pretend target: one word, at 0x5000. */
static int read_word(void *arg, uint64_t addr, uint64_t *val)
{
	if (addr != 0x5000)
		return -EFAULT;
	*val = *(const uint64_t *)arg;
	return 0;
}

static void test_taken(void **state)
{
	/* At 0x1000, 40 bytes:
	 *  0: jb rel32 -> 0x3000       0f 82 fa 1f 00 00
	 *  6: jg rel8 -> out           7f 40
	 *  8: jrcxz -> out             e3 40
	 * 10: jmp [rip + 0x3ff0]       ff 25 f0 3f 00 00   (reads 0x5000)
	 * 16: jmp [rax + rbx*8 + 8]    ff 64 d8 08
	 * 20: jmp r11                  41 ff e3
	 * 23: loop -> out              e2 40
	 * 25: ret, then nops
	 */
	static const uint8_t code[40] = {
	    0x0f, 0x82, 0xfa, 0x1f, 0x00, 0x00, 0x7f, 0x40, 0xe3, 0x40, 0xff, 0x25, 0xf0, 0x3f,
	    0x00, 0x00, 0xff, 0x64, 0xd8, 0x08, 0x41, 0xff, 0xe3, 0xe2, 0x40, 0xc3, 0x90, 0x90,
	    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
	struct func_exits e = {0};
	uint64_t gpr[X86_NGPR] = {0}, mem = 0x9000;
	size_t bad = 0;
	const uint64_t base = 0x7f0000001000; /* where it runs */

	(void)state;
	assert_int_equal(func_exits_find(code, sizeof(code), 0x1000, &e, &bad), 0);
	assert_int_equal(e.n, 8); /* and the ret */
	const struct func_exit *jb = &e.v[0], *jg = &e.v[1], *jrcxz = &e.v[2], *rip = &e.v[3];
	const struct func_exit *table = &e.v[4], *reg = &e.v[5], *loop = &e.v[6];
	assert_int_equal(jb->cond, 2);
	assert_int_equal(jg->cond, 15);
	assert_int_equal(jrcxz->cond, FUNC_COND_RCXZ);
	assert_true(rip->jump.rip);
	assert_int_equal(rip->jump.disp, 0x3ff0);
	assert_int_equal(table->jump.base, X86_RAX);
	assert_int_equal(table->jump.index, X86_RBX);
	assert_int_equal(table->jump.scale, 8);
	assert_int_equal(reg->jump.reg, X86_R11);
	assert_false(func_exit_decidable(loop));
	assert_true(func_exit_decidable(table));

	/* jb: taken exactly when CF is set. */
	assert_int_equal(func_exit_taken(jb, 40, base, gpr, X86_CF, read_word, &mem), 1);
	assert_int_equal(func_exit_taken(jb, 40, base, gpr, X86_ZF, read_word, &mem), 0);
	/* jg: ZF clear and SF == OF. */
	assert_int_equal(func_exit_taken(jg, 40, base + 6, gpr, 0, read_word, &mem), 1);
	assert_int_equal(func_exit_taken(jg, 40, base + 6, gpr, X86_SF | X86_OF, read_word, &mem),
			 1);
	assert_int_equal(func_exit_taken(jg, 40, base + 6, gpr, X86_SF, read_word, &mem), 0);
	assert_int_equal(func_exit_taken(jg, 40, base + 6, gpr, X86_ZF, read_word, &mem), 0);
	/* jrcxz: rcx zero. */
	assert_int_equal(func_exit_taken(jrcxz, 40, base + 8, gpr, 0, read_word, &mem), 1);
	gpr[X86_RCX] = 1;
	assert_int_equal(func_exit_taken(jrcxz, 40, base + 8, gpr, 0, read_word, &mem), 0);
	/* [rip + disp]: 0x100a + 6 + 0x3ff0 = 0x5000 when run at 0x1000. */
	assert_int_equal(func_exit_taken(rip, 40, 0x1000 + 10, gpr, 0, read_word, &mem), 1);
	mem = 0x1018; /* inside the function: a switch, not an exit */
	assert_int_equal(func_exit_taken(rip, 40, 0x1000 + 10, gpr, 0, read_word, &mem), 0);
	assert_int_equal(func_exit_taken(rip, 40, base + 10, gpr, 0, read_word, &mem), -EFAULT);
	/* [rax + rbx*8 + 8] = [0x4ff0 + 1*8 + 8] = [0x5000]. */
	gpr[X86_RAX] = 0x4ff0;
	gpr[X86_RBX] = 1;
	mem = 0x1000; /* the function's own start: a loop */
	assert_int_equal(func_exit_taken(table, 40, 0x1000 + 16, gpr, 0, read_word, &mem), 0);
	mem = 0x1000 + 40; /* just past its end */
	assert_int_equal(func_exit_taken(table, 40, 0x1000 + 16, gpr, 0, read_word, &mem), 1);
	/* jmp r11. */
	gpr[X86_R11] = base + 39;
	assert_int_equal(func_exit_taken(reg, 40, base + 20, gpr, 0, read_word, &mem), 0);
	gpr[X86_R11] = base - 1;
	assert_int_equal(func_exit_taken(reg, 40, base + 20, gpr, 0, read_word, &mem), 1);
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

static void test_unprobeable(void **state)
{
	/* What Linux's x86 uprobes refuse, and what they take. */
	static const uint8_t lock_dec[] = {0xf0, 0xff, 0x0f};		   /* lock decl (%rdi) */
	static const uint8_t vmovd[] = {0xc5, 0xf9, 0x6e, 0xc6};	   /* VEX, opcode 6e */
	static const uint8_t pshufb[] = {0x66, 0x0f, 0x38, 0x00, 0xc1}; /* three-byte opcode */
	static const uint8_t hlt[] = {0xf4};
	static const uint8_t syscall[] = {0x0f, 0x05};
	static const uint8_t ds_jmp[] = {0x3e, 0xff, 0xe0};		       /* notrack jmp *%rax */
	static const uint8_t evex[] = {0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce}; /* vpbroadcastb */
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint8_t push[] = {0x55};
	static const uint8_t sub_rsp[] = {0x48, 0x83, 0xec, 0x28};

	(void)state;
	assert_string_equal(func_unprobeable(lock_dec, sizeof(lock_dec)), "a lock prefix");
	assert_non_null(func_unprobeable(vmovd, sizeof(vmovd)));
	assert_non_null(func_unprobeable(pshufb, sizeof(pshufb)));
	assert_non_null(func_unprobeable(hlt, sizeof(hlt)));
	assert_non_null(func_unprobeable(syscall, sizeof(syscall)));
	assert_string_equal(func_unprobeable(ds_jmp, sizeof(ds_jmp)), "a segment override prefix");
	assert_null(func_unprobeable(evex, sizeof(evex)));
	assert_null(func_unprobeable(endbr, sizeof(endbr)));
	assert_null(func_unprobeable(push, sizeof(push)));
	assert_null(func_unprobeable(sub_rsp, sizeof(sub_rsp)));
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
	    cmocka_unit_test(test_exits),      cmocka_unit_test(test_taken),
	    cmocka_unit_test(test_refused),    cmocka_unit_test(test_go_entry),
	    cmocka_unit_test(test_live_depth), cmocka_unit_test(test_unprobeable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
