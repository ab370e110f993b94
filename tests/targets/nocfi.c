/*
 * A target whose hot function is called from code without unwind
 * information, as a JIT's stubs or hand-written assembly may be.
 *
 *   nocfi SECONDS
 *
 * main calls stub(), assembly with no CFI, which sets the frame pointer
 * to a value that leads nowhere (not 0, which would say "outermost
 * frame") and calls spin(), C, which runs for SECONDS of the process's
 * own CPU time. A walk of the stack gets from spin to stub and no
 * further: past stub neither CFI nor the frame pointer tells where its
 * caller is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void stub(double seconds);
void spin(double seconds);

// clang-format off
__asm__(".text\n"
	".globl stub\n"
	".type stub, @function\n"
	"stub:\n"
	"	push %rbp\n"
	"	mov $0x7777, %rbp\n"
	"	call spin\n"
	"	pop %rbp\n"
	"	ret\n"
	".size stub, .-stub\n");
// clang-format on

static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, used)) void spin(double seconds)
{
	while (cpu_seconds() < seconds)
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (unsigned long)i;
}

int main(int argc, char **argv)
{
	stub(argc > 1 ? atof(argv[1]) : 1);
	printf("nocfi: done\n");
	return 0;
}
