/*
 * A target whose arguments sit in every place the SysV ABI gives them, for
 * the tests that `recce trace` reads each from where it is and shows "?"
 * (null in JSON, with the reason) for one it cannot read, never another
 * register's value; and a string argument as it was at the call.
 *
 *   values [N]
 *
 * Prints "values: ready" and waits for SIGUSR1 (sent once a tracer is in),
 * then for i = 0..N-1 (default 10) calls each function below with n = i,
 * one round every millisecond, prints "values: SUM" and exits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ready.h"

struct point {
	int x, y;
}; /* 8 bytes: one integer register */
struct named {
	long id;
	const char *name;
}; /* 16 bytes: two integer registers */
struct big {
	long a[4];
}; /* over 16 bytes: in memory, no register */
struct mixed {
	double weight;
	long count;
}; /* an xmm register and one integer register */

static volatile long sink;

__attribute__((noinline)) long at_point(struct point p, long n)
{
	return sink += p.x + p.y + n;
}

__attribute__((noinline)) long after_named(struct named q, long n)
{
	return sink += q.id + q.name[0] + n;
}

__attribute__((noinline)) long after_big(struct big b, long n)
{
	return sink += b.a[0] + b.a[3] + n;
}

__attribute__((noinline)) long after_mixed(struct mixed m, long n)
{
	return sink += (long)m.weight + m.count + n;
}

__attribute__((noinline)) long after_double(double f, long n)
{
	return sink += (long)f + n;
}

__attribute__((noinline)) long after_wide(__int128 w, long n)
{
	return sink += (long)(w >> 64) + n;
}

__attribute__((noinline)) long seventh(long a, long b, long c, long d, long e, long f, long n)
{
	return sink += a + b + c + d + e + f + n;
}

/* Its first argument is never used: a compiler may drop it (LLVM does for
 * an internal function, without renaming it), and n moves to rdi. */
static __attribute__((noinline)) long unused_first(long unused, long n)
{
	return sink += n * 3;
}

/* Rewrites the text its caller gave it at once: only a copy made at the
 * call shows what it was given. */
__attribute__((noinline)) long relabel(char *label, long n)
{
	snprintf(label, 16, "gone");
	return sink += n;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long sum = 0;
	target_ready("values");
	target_wait_go();
	for (long i = 0; i < n; i++) {
		struct point p = {(int)i, 2};
		struct named q = {100 + i, "q"};
		struct big b = {{i, 1, 2, 3}};
		struct mixed m = {0.5, i};
		sum += at_point(p, i) + after_named(q, i) + after_big(b, i) + after_mixed(m, i) +
		       after_double(1.5, i) + after_wide((__int128)i << 64, i) +
		       seventh(1, 2, 3, 4, 5, 6, i) + unused_first(99, i);
		char label[16];
		snprintf(label, sizeof(label), "label-%ld", i);
		sum += relabel(label, i);
		pause_ms(1);
	}
	printf("values: %ld\n", sum);
	return 0;
}
