/*
 * A target whose stack keeps faulting pages in, for the unwinder's case of
 * a sample taken in that fault (the kernel's copy of the stack is then
 * empty: it copies from the stack pointer on, and that page is not in
 * memory yet). Each round churn() gives the pages below its stack back
 * (madvise MADV_DONTNEED) and calls big_frame(), whose first touch of its
 * 16 KiB frame is at the stack pointer, on a page given back: as a
 * function's first touch of a new stack page is (ld.so's as any program
 * starts, deep recursion).
 *
 *   stackfault [SECONDS]
 *
 * Runs until it has had SECONDS (default 1) of CPU time, so a busy
 * machine does not shorten its profile; prints "stackfault: N rounds".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE  4096ul
#define FRAME 16384

static volatile unsigned long sink;

/* The frame below the caller's: its lowest byte, at the stack pointer,
 * written first. */
__attribute__((noinline)) static void big_frame(void)
{
	volatile char buf[FRAME];

	buf[0] = 1;
	buf[FRAME - 1] = 2;
	sink += (unsigned long)buf[0] + (unsigned long)buf[FRAME - 1];
}

__attribute__((noinline)) static void churn(void)
{
	volatile char here = 0;
	uintptr_t top = ((uintptr_t)&here & ~(PAGE - 1)) - 2 * PAGE;

	/* The pages from two below this frame's down to past big_frame's
	 * lowest: this frame and madvise's are above them. */
	madvise((void *)(top - FRAME - PAGE), FRAME + PAGE, MADV_DONTNEED);
	big_frame();
	sink += (unsigned long)here;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long rounds = 0;

	while (cpu_seconds() < seconds) {
		for (int i = 0; i < 100; i++)
			churn();
		rounds += 100;
	}
	printf("stackfault: %lu rounds\n", rounds);
	return 0;
}
