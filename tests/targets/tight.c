/*
 * tight: threads calling small functions in tight loops, for
 * `recce trace --fast`.
 *
 *   tight CALLS THREADS [PER_SECOND]
 *
 * Prints "ready" and waits for SIGUSR1 (so a tracer can attach first);
 * then each of THREADS threads calls step(i, t) CALLS times in a row
 * (with PER_SECOND, the threads together make that many calls a second,
 * each sleeping until its next 250 are due),
 * and bump(), clampit(), scale() and pick() 1000 times each, checking every
 * result; prints "done calls=N bad=N" and sleeps until killed. With CALLS
 * 0 the threads call step() forever (paced as above with PER_SECOND,
 * in batches of 1000) and print "rate N" (calls in the last 100 ms, all
 * threads) every 100 ms.
 *
 * The functions' first instructions are the kinds a trampoline must move:
 * bump() starts with a RIP-relative load, clampit() with a conditional
 * jump, scale() takes and returns doubles (in vector registers the
 * recorder must leave alone). pick() jumps into the last five bytes before
 * its return, which --fast cannot hook. In the endless mode each thread
 * also calls scale() once every 10 calls of step().
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WORK __attribute__((noinline, noclone))

static volatile long k = 3, sink;
static atomic_long total, bad;
static long calls, per_second;
static volatile sig_atomic_t go;
static int nthreads;

WORK long step(long i, long t)
{
	return i * 2 + t;
}

WORK long bump(long x)
{
	return x + k;
}

/* clampit(x): x < 0 ? 0 : 3x + 1, written so that a conditional jump
 * lies in its first five bytes. */
long clampit(long x);
__asm__(".globl clampit\n.type clampit, @function\nclampit:\n"
	"\ttest %rdi, %rdi\n\tjs 1f\n\tlea 1(%rdi,%rdi,2), %rax\n\tret\n"
	"1:\txor %eax, %eax\n\tret\n.size clampit, .-clampit\n");

WORK double scale(double x, double y, long n)
{
	return x * (double)n + y;
}

/* pick(x): x == 0 ? 0 : x + 1, its conditional jump landing on the
 * `pop` just before the `ret`. */
long pick(long x);
__asm__(".globl pick\n.type pick, @function\npick:\n"
	"\tpush %rbx\n\tmov %rdi, %rax\n\ttest %rdi, %rdi\n\tje 1f\n"
	"\tadd $1, %rax\n\tmov %rax, %rbx\n1:\tpop %rbx\n\tret\n.size pick, .-pick\n");

/* Moves *due on by the time n calls of one thread take at the paced rate
 * and sleeps until then (not at all when the thread is behind). */
static void sleep_until_due(struct timespec *due, long n)
{
	long ns = n * 1000000000L / per_second * nthreads;
	due->tv_nsec += ns % 1000000000L;
	due->tv_sec += ns / 1000000000L + due->tv_nsec / 1000000000L;
	due->tv_nsec %= 1000000000L;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, due, NULL);
}

static void *worker(void *arg)
{
	long t = (long)arg, sum = 0, want = 0, wrong = 0;

	struct timespec due;
	clock_gettime(CLOCK_MONOTONIC, &due);
	if (calls == 0) {
		for (;;) {
			for (int i = 0; i < 1000; i++) {
				sum += step(i, t);
				if (i % 10 == 0)
					sum += (long)scale(1.0, 2.0, i);
			}
			sink = sum;
			atomic_fetch_add_explicit(&total, 1000, memory_order_relaxed);
			if (per_second)
				sleep_until_due(&due, 1000);
		}
	}
	for (long i = 0; i < calls; i++) {
		if (per_second && i % 250 == 0 && i)
			sleep_until_due(&due, 250);
		sum += step(i, t);
		want += i * 2 + t;
	}
	wrong += sum != want;
	for (long i = 0; i < 1000; i++) {
		wrong += bump(i) != i + 3;
		wrong += clampit(i - 500) != (i < 500 ? 0 : (i - 500) * 3 + 1);
		wrong +=
		    scale(0.5 * (double)i, 0.25, t + 1) != 0.5 * (double)i * (double)(t + 1) + 0.25;
		wrong += pick(i) != (i == 0 ? 0 : i + 1);
	}
	atomic_fetch_add(&bad, wrong);
	atomic_fetch_add(&total, calls);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	calls = argc > 1 ? atol(argv[1]) : 100000;
	nthreads = argc > 2 ? atoi(argv[2]) : 4;
	per_second = argc > 3 ? atol(argv[3]) : 0;
	pthread_t th[64];

	if (nthreads < 1 || nthreads > 64)
		return 2;
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (!go)
		pause();
	for (long t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	if (calls == 0) {
		long last = 0;
		for (;;) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
			long now = atomic_load(&total);
			printf("rate %ld\n", now - last);
			last = now;
		}
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	printf("done calls=%ld bad=%ld\n", atomic_load(&total), atomic_load(&bad));
	for (;;)
		pause();
}
