/*
 * keeper: a target for recce patch whose caller keeps a value in a
 * register across the call to the function patched, as GCC's -fipa-ra
 * (on at -O2) compiles it: step() leaves `who` in rsi, where slow_sum()
 * received it and left it alone, for its tail call of count(). A
 * replacement may use rsi as it likes, so recce must give it back. And
 * functions of other shapes, for the thunk that does it: arguments on
 * the stack (many), a result in xmm0 (ratio), a result in memory (trio).
 * Every 50 ms it prints "old=N new=N bad=N" (bad: wrong results, or
 * count() called with a `who` that is not the caller's); each function
 * says whose code ran through *who.
 *
 * Built -O2 without -fno-ipa-ra, as Debian builds its packages.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define WORK __attribute__((noinline, noclone))

static atomic_long old_calls, new_calls, bad_calls;
static int whos[1];

WORK long slow_sum(long n, int *who)
{
	long s = 0;

	*who = 1;
	for (long i = 0; i < n; i++)
		s += (i ^ (s >> 3)) & 0xff;
	return s;
}

WORK long many(long a, long b, long c, long d, long e, long f, long g, long h, int *who)
{
	*who = 1;
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

WORK double ratio(double x, double y, int *who)
{
	*who = 1;
	return x / y;
}

struct trio {
	long a, b, c;
};

WORK struct trio trio(long n, int *who)
{
	*who = 1;
	return (struct trio){n, n * 2, n * 3};
}

WORK void count(long sum, int *who)
{
	if (who != whos || sum != 398549)
		bad_calls++;
	else if (*who == 1)
		old_calls++;
	else
		new_calls++;
}

WORK void step(long n, int *who)
{
	count(slow_sum(n, who), who);
}

/* The other shapes: a value kept across each call in a register of the
 * kind the call's result comes back in. */
WORK void shapes(long n)
{
	int who = 0;
	double kept = (double)n / 4;
	long m = many(1, 2, 3, 4, 5, 6, 7, n, &who);
	double q = ratio((double)n, 8.0, &who);
	struct trio t = trio(n, &who);

	if (m != 140 + 8 * n || q != kept / 2 || t.a != n || t.b != 2 * n || t.c != 3 * n)
		bad_calls++;
	else if (who == 1)
		old_calls++;
	else
		new_calls++;
}

int main(void)
{
	struct timespec last, now;

	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &last);
	for (;;) {
		step(10000, whos);
		shapes(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000000000L + now.tv_nsec - last.tv_nsec >
		    50000000L) {
			printf("old=%ld new=%ld bad=%ld\n", (long)old_calls, (long)new_calls,
			       (long)bad_calls);
			last = now;
		}
		usleep(100);
	}
}
