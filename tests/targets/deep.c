/*
 * A target whose hot code runs at the bottom of a deep stack, for
 * `--call-graph auto`: main calls descend() 40 times over, each frame
 * holding 1 KiB, and the innermost calls bottom(), which burns CPU. The
 * stack from bottom to main is about 41 KiB, far more than the 8 KiB a
 * sample copies. With `wide`, main calls wide(), one frame of 20 KiB,
 * and it calls bottom(): a copy that holds bottom's frame ends inside
 * wide's, which only a copy of more than 20 KiB gets past. With `hole`,
 * a thread on a stack of its own, fresh from mmap, calls hole(), one
 * frame of 16 KiB of which only the ends are touched, and it calls
 * bottom(): the pages in between were never in memory, so no probe can
 * read them. With `skip`, main calls outer(), which calls middle(), built
 * without a frame pointer (rbp left as outer's), which calls descend():
 * the frame-pointer walk from descend's frames goes from middle straight
 * to main, outer skipped. With a number N, main calls descend() N times
 * over (at most 40): 10 make about 11 KiB.
 *
 *   deep SECONDS [wide|hole|skip|N]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DEPTH 40

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void bottom(double end)
{
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (uint64_t)i;
}

__attribute__((noinline)) static void descend(int n, double end)
{
	volatile char pad[1024];

	pad[n] = (char)n;
	if (n + 1 < DEPTH)
		descend(n + 1, end);
	else
		bottom(end);
	sink += (uint64_t)pad[n];
}

__attribute__((noinline)) static void wide(double end)
{
	volatile char pad[20 * 1024];

	/* Every page of it touched: none is missing from a copy. */
	for (size_t i = 0; i < sizeof(pad); i += 1024)
		pad[i] = 1;
	bottom(end);
	sink += (uint64_t)pad[0];
}

__attribute__((noinline)) static void hole(double end)
{
	volatile char pad[16 * 1024];

	/* Its lowest page touched, its highest by the call: not the middle. */
	pad[0] = 1;
	bottom(end);
	sink += (uint64_t)pad[0];
}

/* Leaves rbp as its caller's (a frame pointer's walk reads outer's frame
 * for its own). */
__attribute__((noinline, optimize("omit-frame-pointer"))) static void middle(double end)
{
	descend(0, end);
	sink++;
}

__attribute__((noinline)) static void outer(double end)
{
	middle(end);
	sink++;
}

static void *hole_thread(void *arg)
{
	hole(*(double *)arg);
	return NULL;
}

/* hole() on a thread whose stack no page of which was touched before,
 * and none brought in by a huge page. */
static void run_hole(double end)
{
	size_t size = 1 << 20;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	pthread_attr_t attr;
	pthread_t t;

	if (stack == MAP_FAILED) {
		perror("deep: mmap");
		exit(1);
	}
	madvise(stack, size, MADV_NOHUGEPAGE);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, size);
	if (pthread_create(&t, &attr, hole_thread, &end) != 0) {
		fprintf(stderr, "deep: pthread_create failed\n");
		exit(1);
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;

	if (argc > 2 && strcmp(argv[2], "wide") == 0)
		wide(now() + seconds);
	else if (argc > 2 && strcmp(argv[2], "hole") == 0)
		run_hole(now() + seconds);
	else if (argc > 2 && strcmp(argv[2], "skip") == 0)
		outer(now() + seconds);
	else if (argc > 2 && atoi(argv[2]) > 0 && atoi(argv[2]) <= DEPTH)
		descend(DEPTH - atoi(argv[2]), now() + seconds);
	else
		descend(0, now() + seconds);
	printf("deep: done\n");
	return 0;
}
