/*
 * Unit tests of the DWARF unwinding engines, on this very process:
 *  - cfi-rules reads the exact rule of each instruction of a function
 *    written in assembly with known CFI (before and after the frame is
 *    set up, with rbp as the CFA, at the return), reports a CFA
 *    expression as not simple and code without CFI as such, keeps
 *    answers under a caller's key, and caches nothing wrong after a
 *    clear;
 *  - the unwinder, given registers and a copy of the stack taken three
 *    calls deep (as a perf sample carries them), returns the sampled IP
 *    followed by the exact return addresses of the callers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc-maps.h"
#include "proc/cfi-rules.h"
#include "proc/unwind.h"
#include "symbols/symbolize.h"

/* push rbp; mov rbp, rsp; nop; pop rbp; ret, with its CFI spelled out;
 * then a function whose CFA is a DWARF expression. */
__asm__(".text\n"
	".globl cfi_probe\n"
	".type cfi_probe, @function\n"
	"cfi_probe:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"nop\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	".cfi_restore %rbp\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_probe, .-cfi_probe\n"
	".globl cfi_expr\n"
	".type cfi_expr, @function\n"
	"cfi_expr:\n"
	".cfi_startproc\n"
	".cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n" /* CFA = *(rsp + 8) */
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size cfi_expr, .-cfi_expr\n"
	".globl cfi_none\n"
	".type cfi_none, @function\n"
	"cfi_none:\n" /* no CFI at all, as Debian's ld.so _start */
	"nop\n"
	"ret\n"
	".size cfi_none, .-cfi_none\n");
void cfi_probe(void);
void cfi_expr(void);
void cfi_none(void);

/* An epilogue as GCC writes its CFI: after the pop, rbp's rule still
 * says where it was saved (no .cfi_restore), below the stack pointer. */
__asm__(".text\n"
	".globl gcc_epilogue\n"
	".type gcc_epilogue, @function\n"
	"gcc_epilogue:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"nop\n"
	"pop %rbp\n"
	".cfi_def_cfa_offset 8\n"
	".globl gcc_epilogue_ret\n"
	"gcc_epilogue_ret:\n"
	"ret\n"
	".cfi_endproc\n"
	".size gcc_epilogue, .-gcc_epilogue\n");
void gcc_epilogue(void);
void gcc_epilogue_ret(void);

/* A thunk without CFI, as LLD writes PLT entries: endbr64, then a jump. */
__asm__(".text\n"
	".globl cfi_less_thunk\n"
	".type cfi_less_thunk, @function\n"
	"cfi_less_thunk:\n"
	"endbr64\n"
	"jmp cfi_none\n"
	".size cfi_less_thunk, .-cfi_less_thunk\n"
	/* A system call's wrapper without CFI, as glibc's clone3: its IP
	 * past the syscall while its thread is in the call. */
	".globl cfi_less_syscall\n"
	".type cfi_less_syscall, @function\n"
	"cfi_less_syscall:\n"
	"mov $39, %eax\n"
	"syscall\n"
	".globl cfi_less_syscall_ret\n"
	"cfi_less_syscall_ret:\n"
	"ret\n"
	".size cfi_less_syscall, .-cfi_less_syscall\n");
void cfi_less_thunk(void);
void cfi_less_syscall_ret(void);

/* A function after the int3 padding compilers put between functions, and
 * one whose first byte a test turns into a breakpoint, in memory only. */
__asm__(".text\n"
	".p2align 4\n"
	"int3\nint3\nint3\nint3\n"
	".globl after_pad\n"
	".type after_pad, @function\n"
	"after_pad:\n"
	".cfi_startproc\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size after_pad, .-after_pad\n"
	".globl probed\n"
	".type probed, @function\n"
	"probed:\n"
	".cfi_startproc\n"
	"nop\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size probed, .-probed\n");
void after_pad(void);
void probed(void);

static Dwfl *self_dwfl(void)
{
	static const Dwfl_Callbacks cb = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *d = dwfl_begin(&cb);

	assert_non_null(d);
	assert_int_equal(dwfl_linux_proc_report(d, getpid()), 0);
	assert_int_equal(dwfl_report_end(d, NULL, NULL), 0);
	return d;
}

static void assert_rule(struct cfi_rules *c, Dwfl *d, uint64_t pc, int cfa_reg, int cfa_off,
			int bp_how, int bp_off)
{
	struct cfi_rule r;

	assert_int_equal(cfi_rules_get(c, d, pc, &r), 1);
	assert_int_equal(r.cfa_reg, cfa_reg);
	assert_int_equal(r.cfa_off, cfa_off);
	assert_int_equal(r.ra_how, CFI_SAVED_AT);
	assert_int_equal(r.ra_off, -8);
	assert_int_equal(r.bp_how, bp_how);
	if (bp_how == CFI_SAVED_AT)
		assert_int_equal(r.bp_off, bp_off);
}

static void test_cfi_rules(void **state)
{
	Dwfl *d = self_dwfl();
	struct cfi_rules *c = cfi_rules_new();
	uint64_t f = (uint64_t)(uintptr_t)cfi_probe;
	struct cfi_rule r;

	(void)state;
	assert_non_null(c);
	for (int pass = 0; pass < 2; pass++) { /* the second pass reads the cache */
		assert_rule(c, d, f + 0, CFI_REG_SP, 8, CFI_SAME, 0);	     /* push rbp */
		assert_rule(c, d, f + 1, CFI_REG_SP, 16, CFI_SAVED_AT, -16); /* mov rbp, rsp */
		assert_rule(c, d, f + 4, CFI_REG_BP, 16, CFI_SAVED_AT, -16); /* nop */
		assert_rule(c, d, f + 5, CFI_REG_BP, 16, CFI_SAVED_AT, -16); /* pop rbp */
		assert_rule(c, d, f + 6, CFI_REG_SP, 8, CFI_SAME, 0);	     /* ret */
	}
	assert_int_equal(cfi_rules_get(c, d, (uint64_t)(uintptr_t)cfi_expr, &r), 0);
	/* Code without CFI says so (the unwinder ends a stack there when
	 * rbp is zero); an address in no module has no rule, and computed
	 * alone it says that no module holds it. */
	assert_int_equal(cfi_rules_get(c, d, (uint64_t)(uintptr_t)cfi_none, &r), 1);
	assert_int_equal(r.ra_how, CFI_NONE);
	assert_int_equal(cfi_rules_get(c, d, 0x1000, &r), 0);
	assert_int_equal(cfi_rules_compute(d, 0x1000, &r), -ENOENT);
	/* Under a key of the caller's: nothing until it is put, then the
	 * rule, or "not simple". */
	assert_int_equal(cfi_rules_find(c, 7ull << 40 | 0x1234, &r), -ENOENT);
	assert_int_equal(cfi_rules_compute(d, f + 1, &r), 1);
	assert_int_equal(cfi_rules_put(c, 7ull << 40 | 0x1234, 1, &r), 0);
	assert_int_equal(cfi_rules_put(c, 7ull << 40 | 0x1235, 0, &r), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(cfi_rules_find(c, 7ull << 40 | 0x1234, &r), 1);
	assert_int_equal(r.cfa_off, 16);
	assert_int_equal(cfi_rules_find(c, 7ull << 40 | 0x1235, &r), 0);
	cfi_rules_clear(c);
	assert_rule(c, d, f + 4, CFI_REG_BP, 16, CFI_SAVED_AT, -16);
	cfi_rules_free(c);
	dwfl_end(d);
}

/* A perf sample taken by hand: the registers in PERF_EVENTS_REGS_MASK
 * order (ax bx cx dx si di bp sp ip, r8-r15) and the stack above sp. */
#define STACK_COPY 8192
static uint64_t regs[17];
static uint8_t stack_copy[STACK_COPY];
static size_t stack_len;
static uint64_t expected[3];

/* The end of the main thread's stack: a copy must not read past it. */
static uint64_t stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi, end = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	fclose(f);
	assert_true(end != 0);
	return end;
}

/* The raw stack holds ASan's redzones too: copy it the way the kernel
 * does, without the sanitizer's checks. */
static __attribute__((noinline, no_sanitize_address)) void copy_raw(uint8_t *to, uint64_t from,
								    size_t n)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)from;

	for (size_t i = 0; i < n; i++)
		to[i] = p[i];
}

static __attribute__((noinline)) int take_sample(void)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	regs[6] = bp;
	regs[7] = sp;
	regs[8] = ip;
	stack_len = stack_end() - sp < STACK_COPY ? stack_end() - sp : STACK_COPY;
	copy_raw(stack_copy, sp, stack_len);
	expected[0] = ip;
	expected[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return (int)(sp & 1);
}

static __attribute__((noinline)) int middle(void)
{
	int r = take_sample();

	expected[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return r + 1; /* no tail call: this frame stays on the stack */
}

static __attribute__((noinline)) int outer(void)
{
	return middle() + 1;
}

/* A sample taken by hand (outer(), three calls deep), and this
 * process's mappings read after it, for the unwinder to read. */
static struct proc_registry *sampled_self(struct symbolizer **sym)
{
	*sym = symbolizer_new();
	struct proc_registry *procs = *sym ? procs_new(*sym) : NULL;

	assert_non_null(procs);
	assert_true(outer() > 0);
	assert_int_equal(procs_scan(procs, getpid()), 0);
	return procs;
}

static void sampled_self_free(struct proc_registry *procs, struct symbolizer *sym)
{
	procs_free(procs);
	symbolizer_free(sym);
}

static void test_unwind_self(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	uint64_t frames[64];

	(void)state;
	for (int check = 0; check < 2; check++) { /* the fast path, then both compared */
		struct unwinder *u = unwinder_new(procs, check);
		assert_non_null(u);
		int ended = -1;
		int n =
		    unwinder_unwind(u, pid, tid, regs, stack_copy, stack_len, frames, 64, &ended);
		assert_true(n >= 4); /* take_sample, middle, outer, this test... */
		/* A copy that holds the whole stack is walked to its end. */
		if (stack_len < STACK_COPY)
			assert_int_equal(ended, 1);
		for (int i = 0; i < 3; i++)
			assert_int_equal(frames[i], expected[i]);
		/* A stack cut to nothing still gives the sampled IP. */
		assert_int_equal(
		    unwinder_unwind(u, pid, tid, regs, stack_copy, 0, frames, 64, &ended) >= 1, 1);
		assert_int_equal(frames[0], expected[0]);
		assert_int_equal(ended, 0); /* stopped short of the end */
		assert_int_equal(
		    unwinder_unwind(u, pid, tid, regs, stack_copy, stack_len, frames, 2, &ended),
		    2);
		assert_int_equal(ended, 0);
		if (check) {
			struct unwind_check_stats st;
			unwinder_check_stats(u, &st);
			assert_true(st.checked >= 1);
			assert_int_equal(st.differ, 0);
		}
		unwinder_free(u);
	}
	sampled_self_free(procs, sym);
}

/* A sample at the ret of a function whose rbp was popped, as GCC's CFI
 * describes it, called from a frame whose CFA is rbp: the popped slot is
 * below the stack pointer, not in the copy, and rbp holds the caller's
 * value again. The walk goes on through the caller to its callers. */
static void test_popped_rbp(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	static uint8_t copy[8 + STACK_COPY];
	uint64_t frames[64], r[17];

	(void)state;
	/* take_sample's frame, with a return into it pushed below. */
	memcpy(copy, &expected[0], 8);
	memcpy(copy + 8, stack_copy, stack_len);
	memcpy(r, regs, sizeof(r));
	r[7] = regs[7] - 8;
	r[8] = (uint64_t)(uintptr_t)gcc_epilogue_ret;
	for (int check = 0; check < 2; check++) {
		struct unwinder *u = unwinder_new(procs, check);
		assert_non_null(u);
		int n = unwinder_unwind(u, pid, tid, r, copy, stack_len + 8, frames, 64, NULL);
		if (!check) {
			assert_true(n >= 4);
			assert_int_equal(frames[0], r[8]);
			assert_int_equal(frames[1], expected[0]);
			assert_int_equal(frames[2], expected[1]);
			assert_int_equal(frames[3], expected[2]);
		} else {
			/* libdwfl reads the slot and stops; not compared. */
			struct unwind_check_stats st;
			unwinder_check_stats(u, &st);
			assert_int_equal(st.checked, 1);
			assert_int_equal(st.differ, 0);
		}
		unwinder_free(u);
	}
	sampled_self_free(procs, sym);
}

/* A sample at a thunk without CFI, called from middle: at its endbr64
 * and at its jump the stack is as at entry, the return into middle on
 * top; the walk goes on through middle and outer. At an address that is
 * no stub (cfi_none's ret), or with a top word that follows no call,
 * the fast path does not take the top word for the caller. */
static void test_stub_leaf(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	uint64_t frames[64], r[17], word;
	size_t at = 0;

	(void)state;
	/* The stack as middle's call left it: from the return into middle,
	 * with middle's rbp (saved in take_sample's frame). */
	while (at + 8 <= stack_len && (memcpy(&word, stack_copy + at, 8), word != expected[1]))
		at += 8;
	assert_true(at + 8 <= stack_len);
	memcpy(r, regs, sizeof(r));
	memcpy(&r[6], stack_copy + (regs[6] - regs[7]), 8);
	r[7] = regs[7] + at;
	struct unwinder *u = unwinder_new(procs, 0);
	assert_non_null(u);
	for (int off = 0; off <= 4; off += 4) { /* endbr64, jmp */
		r[8] = (uint64_t)(uintptr_t)cfi_less_thunk + (uint64_t)off;
		int n = unwinder_unwind(u, pid, tid, r, stack_copy + at, stack_len - at, frames, 64,
					NULL);
		assert_true(n >= 3);
		assert_int_equal(frames[0], r[8]);
		assert_int_equal(frames[1], expected[1]);
		assert_int_equal(frames[2], expected[2]);
	}
	/* Past the syscall of a wrapper without CFI, the same. */
	r[8] = (uint64_t)(uintptr_t)cfi_less_syscall_ret;
	int n = unwinder_unwind(u, pid, tid, r, stack_copy + at, stack_len - at, frames, 64, NULL);
	assert_true(n >= 3);
	assert_int_equal(frames[1], expected[1]);
	assert_int_equal(frames[2], expected[2]);
	/* (libdwfl then guesses by rbp, which skips middle.) */
	r[8] = (uint64_t)(uintptr_t)cfi_none + 1;
	frames[1] = 0;
	unwinder_unwind(u, pid, tid, r, stack_copy + at, stack_len - at, frames, 64, NULL);
	assert_int_not_equal(frames[1], expected[1]);
	/* On top, code that follows no call: a byte past the return into
	 * middle (from there the walk would go on, were it taken). */
	static uint8_t copy[STACK_COPY];
	uint64_t code = expected[1] + 1;
	memcpy(copy, stack_copy + at, stack_len - at);
	memcpy(copy, &code, 8);
	r[8] = (uint64_t)(uintptr_t)cfi_less_thunk;
	frames[1] = 0;
	unwinder_unwind(u, pid, tid, r, copy, stack_len - at, frames, 64, NULL);
	assert_int_not_equal(frames[1], code);
	unwinder_free(u);
	sampled_self_free(procs, sym);
}

/* How a sample's stack ends: a walk cut by a short copy says so with a
 * marker; one whose leaf is in no file (JIT code, a binary gone) has no
 * unwind information there, whatever libdwfl then tried to read, and is
 * not said to have run out of copy. */
static void test_end_markers(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	uint64_t out[80], r[17];

	(void)state;
	struct unwinder *u = unwinder_new(procs, 0);
	assert_non_null(u);
	/* 48 bytes asked and copied: the copy ends in the middle of the
	 * stack. */
	struct unwind_sample smp = {pid, tid, regs[8], NULL, 0, regs, stack_copy, 48, 1, 48, 0};
	size_t n = unwinder_sample(u, &smp, 0, 0, 64, out, 80);
	assert_true(n >= 2);
	assert_true(unwind_is_mark(out[n - 1]));
	assert_string_equal(unwind_mark_name(out[n - 1]), "[stack copy ended]");
	/* Asked for more, the kernel copies less where the stack ends, or
	 * at a page of it not in memory. This stack goes on past the 48
	 * bytes: such a page ended the copy. */
	smp.stack_asked = STACK_COPY;
	n = unwinder_sample(u, &smp, 0, 0, 64, out, 80);
	assert_true(unwind_is_mark(out[n - 1]));
	assert_string_equal(unwind_mark_name(out[n - 1]), "[stack not in memory]");
	/* The same 48 bytes as the last of the stack: the copy held it to
	 * its end, and the walk did not stop for want of copy. */
	uint64_t at_end[17];
	memcpy(at_end, regs, sizeof(at_end));
	at_end[7] = stack_end() - 48;
	smp.regs = at_end;
	n = unwinder_sample(u, &smp, 0, 0, 64, out, 80);
	assert_false(unwind_is_mark(out[n - 1]));
	smp.regs = regs;
	smp.stack_asked = 48;
	/* The same stack, from an IP in no mapping and a frame pointer's
	 * garbage, as in code built without them. */
	memcpy(r, regs, sizeof(r));
	r[6] = 0x10;
	r[8] = 0x1000;
	smp.ip = r[8];
	smp.regs = r;
	n = unwinder_sample(u, &smp, 0, 0, 64, out, 80);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], 0x1000);
	unwinder_free(u);
	sampled_self_free(procs, sym);
}

/* A sample at code without CFI (clone3's system call in libc, say) whose
 * rbp is no frame pointer of its own: the kernel's frame-pointer walk
 * gives whatever it read from there. A return address in no code of the
 * process ends the stack there, marked, and is not shown; a chain of
 * return addresses into code is kept. */
static void test_fp_garbage(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	uint64_t r[17], out[80];
	uint8_t stack[16] = {0};

	(void)state;
	struct unwinder *u = unwinder_new(procs, 0);
	assert_non_null(u);
	memcpy(r, regs, sizeof(r));
	r[6] = 0x10; /* not 0, which would say "outermost" */
	r[8] = (uint64_t)(uintptr_t)cfi_none;
	uint64_t chain[] = {(uint64_t)PERF_CONTEXT_USER, r[8], 0x7f0000001000ull,
			    0x7f0000002000ull};
	struct unwind_sample smp = {
	    getpid(), (pid_t)syscall(SYS_gettid), r[8], chain, 4, r, stack, sizeof(stack), 1, 0, 0};
	size_t n = unwinder_sample(u, &smp, 1, 64, 64, out, 80);
	assert_int_equal(n, 3);
	assert_int_equal(out[1], r[8]);
	assert_true(unwind_is_mark(out[2]));
	assert_string_equal(unwind_mark_name(out[2]), "[no unwind info]");
	/* Into code, but past no call (cfi_expr's ret follows a nop). */
	chain[2] = (uint64_t)(uintptr_t)cfi_expr + 1;
	n = unwinder_sample(u, &smp, 1, 64, 64, out, 80);
	assert_int_equal(n, 3);
	assert_true(unwind_is_mark(out[2]));
	/* Asked again, the answer kept is the same. */
	n = unwinder_sample(u, &smp, 1, 64, 64, out, 80);
	assert_int_equal(n, 3);
	assert_true(unwind_is_mark(out[2]));
	chain[2] = expected[1];
	chain[3] = expected[2];
	n = unwinder_sample(u, &smp, 1, 64, 64, out, 80);
	assert_int_equal(n, 4);
	assert_int_equal(out[2], expected[1]);
	assert_int_equal(out[3], expected[2]);
	n = unwinder_sample(u, &smp, 1, 64, 64, out, 80);
	assert_int_equal(n, 4);
	assert_int_equal(out[3], expected[2]);
	unwinder_free(u);
	sampled_self_free(procs, sym);
}

/* The first user frame of a sample taken in the kernel, at ip, with a
 * return address on the stack's top and rbp not pushed. */
static uint64_t first_user_frame(struct unwinder *u, uint64_t ip)
{
	static const uint64_t ips[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000000ull,
				       (uint64_t)PERF_CONTEXT_USER};
	uint64_t r[17] = {0}, out[80];
	uint8_t stack[16];
	uint64_t ret = expected[1];

	memcpy(r, regs, sizeof(r));
	r[6] = 0;
	r[8] = ip;
	memcpy(stack, &ret, sizeof(ret));
	memset(stack + 8, 0, 8);
	struct unwind_sample smp = {
	    getpid(), (pid_t)syscall(SYS_gettid), ip, ips, 3, r, stack, sizeof(stack), 0, 0, 0};
	size_t n = unwinder_sample(u, &smp, 0, 64, 64, out, 80);
	assert_true(n >= 4);
	assert_int_equal(out[2], (uint64_t)PERF_CONTEXT_USER);
	return out[3];
}

/* A sample in the kernel while its thread sat in a breakpoint's trap is
 * unwound from the breakpoint's address; one whose IP merely follows the
 * 0xCC padding before a function (a signal handler's first instruction,
 * as the kernel sets it up) is unwound from that IP. */
static void test_trap_ip(void **state)
{
	struct symbolizer *sym;
	struct proc_registry *procs = sampled_self(&sym);
	uint64_t pad = (uint64_t)(uintptr_t)after_pad, bp = (uint64_t)(uintptr_t)probed;
	long page = sysconf(_SC_PAGESIZE);
	void *at = (void *)(uintptr_t)(bp & ~(uint64_t)(page - 1));

	(void)state;
	struct unwinder *u = unwinder_new(procs, 0);
	assert_non_null(u);
	assert_int_equal(*(const volatile uint8_t *)(uintptr_t)(pad - 1), 0xcc);
	assert_int_equal(first_user_frame(u, pad), pad);
	/* probed's first byte a breakpoint, as a uprobe makes it: the IP
	 * past it is the breakpoint's. */
	assert_int_equal(first_user_frame(u, bp + 1), bp + 1);
	assert_int_equal(mprotect(at, (size_t)page * 2, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	*(volatile uint8_t *)(uintptr_t)bp = 0xcc;
	uint64_t got = first_user_frame(u, bp + 1);
	*(volatile uint8_t *)(uintptr_t)bp = 0x90;
	assert_int_equal(mprotect(at, (size_t)page * 2, PROT_READ | PROT_EXEC), 0);
	assert_int_equal(got, bp);
	unwinder_free(u);
	sampled_self_free(procs, sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cfi_rules),	cmocka_unit_test(test_unwind_self),
	    cmocka_unit_test(test_end_markers), cmocka_unit_test(test_fp_garbage),
	    cmocka_unit_test(test_popped_rbp),	cmocka_unit_test(test_stub_leaf),
	    cmocka_unit_test(test_trap_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
