/*
 * A target that spends its time in a signal handler, for the tests of
 * unwinding through signal frames: another thread sends the main thread
 * SIGUSR1 every millisecond, while main() runs work(), a loop; the
 * handler on_signal() calls handler_spin(), which loops 500,000 times
 * (most of a millisecond).
 * Most samples of the main thread are main;work;(glibc's restorer);
 * on_signal;handler_spin, the handler running on the interrupted stack,
 * or with "alt" on a signal stack of its own (as Go's handlers do).
 *
 *   sigspin [SECONDS] [alt]
 *
 * Runs until the main thread has had SECONDS (default 1) of CPU time, so
 * a busy machine does not shorten its profile; prints "sigspin: N
 * signals" at the end.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int stop, working;
static atomic_ulong handled;
static volatile unsigned long sink;
static pthread_t main_thread;

__attribute__((noinline)) static void handler_spin(void)
{
	unsigned long h = sink;

	for (int i = 0; i < 500000; i++)
		h = h * 6364136223846793005ul + (unsigned long)i;
	sink = h;
}

static void on_signal(int sig)
{
	(void)sig;
	handler_spin();
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static void *sender(void *arg)
{
	const struct timespec ms = {0, 1000 * 1000};

	(void)arg;
	/* Signals only while main is in work(), so that every handler's
	 * stack is main;work;... */
	while (!atomic_load(&working))
		nanosleep(&ms, NULL);
	while (!atomic_load(&stop)) {
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void work(double seconds)
{
	unsigned long h = 1;
	sigset_t usr1;

	atomic_store(&working, 1);
	while (cpu_seconds() < seconds) {
		for (int i = 0; i < 100000; i++)
			h = h * 2862933555777941757ul + 3037000493ul;
		sink += h;
	}
	/* A signal sent from here on waits, blocked, until the exit. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct sigaction sa = {0};
	pthread_t t;

	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	if (argc > 2 && strcmp(argv[2], "alt") == 0) {
		static char alt[1 << 16];
		stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)};
		if (sigaltstack(&ss, NULL) != 0)
			return 1;
		sa.sa_flags |= SA_ONSTACK;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	main_thread = pthread_self();
	if (pthread_create(&t, NULL, sender, NULL) != 0)
		return 1;
	work(seconds);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("sigspin: %lu signals\n", atomic_load(&handled));
	return 0;
}
