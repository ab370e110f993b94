/*
 * patchee: a target for recce patch. Four threads call slow_fib(24) in a
 * loop, check every result, and count whose code answered: slow_fib
 * writes 1 to *who, the replacement in fixes/fib-fix.c writes 2. Every
 * 50 ms it prints "old=N new=N bad=N ... eintr=N" (bad: wrong results;
 * eintr: sleeps of the main thread cut short, which a borrowed thread put
 * back must never show). tiny() is
 * three bytes long, too short to patch. A Rust-named function
 * (payroll::total) is called too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define WORK __attribute__((noinline, noclone))

static atomic_long old_calls, new_calls, bad_calls, rust_old, rust_new;

WORK unsigned long long slow_fib(unsigned n, int *who)
{
	*who = 1;
	if (n < 2)
		return n;
	return slow_fib(n - 1, who) + slow_fib(n - 2, who);
}

/* A Rust legacy-mangled name, as rustc writes it. */
WORK long payroll_total(long base, int *who) __asm__("_ZN7payroll5total17h0123456789abcdefE");
WORK long payroll_total(long base, int *who)
{
	*who = 1;
	return base * 3;
}

int tiny(void);
__asm__(".globl tiny\n.type tiny, @function\ntiny:\n\txor %eax, %eax\n\tret\n"
	".size tiny, .-tiny\n");

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		int who = 0;
		unsigned long long r = slow_fib(24, &who);
		if (r != 46368)
			atomic_fetch_add(&bad_calls, 1);
		atomic_fetch_add(who == 2 ? &new_calls : &old_calls, 1);
		int rw = 0;
		if (payroll_total(14, &rw) != 42)
			atomic_fetch_add(&bad_calls, 1);
		atomic_fetch_add(rw == 2 ? &rust_new : &rust_old, 1);
		tiny();
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	long eintr = 0;

	for (int i = 0; i < 4; i++)
		pthread_create(&t, NULL, worker, NULL);
	for (;;) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
			eintr++;
		printf("old=%ld new=%ld bad=%ld rust_old=%ld rust_new=%ld eintr=%ld\n",
		       atomic_load(&old_calls), atomic_load(&new_calls), atomic_load(&bad_calls),
		       atomic_load(&rust_old), atomic_load(&rust_new), eintr);
		fflush(stdout);
	}
}
