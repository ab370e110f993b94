/*
 * A target whose traced functions leave by jumps rather than by ret, as
 * LLVM (clang, rustc) emits them when it optimises for size without frame
 * pointers: built with clang -Os -fomit-frame-pointer.
 *
 *   tails [N] [PAUSE_MS]
 *
 * Waits PAUSE_MS (default 500; "go": its "ready" line and SIGUSR1, see ready.h), then for i =
 * 0..N-1 (default 200), one round every millisecond, calls cond_tail(i), which on odd i leaves by a
 * conditional jump straight into odd_leaf; ptr_tail(i), which leaves by an
 * indirect jump through a table of function pointers; and switchy(i),
 * whose switch jumps through a table inside itself. Prints "tails:
 * calls=N sum=S", sleeps PAUSE_MS again and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ready.h"

static volatile long sink;

__attribute__((noinline)) long odd_leaf(long x)
{
	sink = sink + x;
	return x * 3;
}

__attribute__((noinline)) long even_leaf(long x)
{
	sink = sink - x;
	return x + 1;
}

__attribute__((noinline)) long cond_tail(long x)
{
	if (x & 1)
		return odd_leaf(x);
	return x * 2;
}

typedef long (*leaf_fn)(long);
leaf_fn leaf_table[2] = {even_leaf, odd_leaf};

__attribute__((noinline)) long ptr_tail(long x)
{
	return leaf_table[x & 1](x);
}

__attribute__((noinline)) long switchy(long x)
{
	switch (x % 7) {
	case 0:
		return sink + 11;
	case 1:
		return sink * 3;
	case 2:
		return sink - 5;
	case 3:
		return sink ^ 0x55;
	case 4:
		return sink + x;
	case 5:
		return sink * x;
	default:
		return 7;
	}
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long sum = 0;

	int go = target_start(argc > 2 ? argv[2] : NULL, "tails");
	for (long i = 0; i < n; i++) {
		sum += cond_tail(i) + ptr_tail(i) + switchy(i);
		pause_ms(1);
	}
	printf("tails: calls=%ld sum=%ld\n", n, sum);
	fflush(stdout);
	if (!go)
		target_start(argc > 2 ? argv[2] : NULL, "tails");
	return 0;
}
