/*
 * torture: a target for tests/cli/inject-torture.t, holding its threads
 * in one of the states recce's injector must leave exactly as it found
 * them, each thread checking its own registers, results and errno around
 * that spot and aborting loudly on any difference.
 *
 *   torture MODE [LIB]
 *
 * In every mode the main thread calls work() (patched by the test with
 * fixes/torture-fix.c) and checks each result. MODE adds threads:
 *
 *   spin     own code, every general and vector register checked
 *   libc     malloc, memcpy and free, the results checked
 *   vdso     clock_gettime and gettimeofday in a tight loop
 *   lazy LIB  loads LIB (tests/targets/libs/lazy.c, linked for lazy
 *            binding) and unloads it in a loop, calling it between, so
 *            the calls go through the PLT and the loader's resolver (at
 *            every call when run with LD_BIND_NOT=1)
 *   read     blocked in read() on a pipe the main thread feeds
 *   sleep    nanosleep, clock_nanosleep(TIMER_ABSTIME) and poll with a
 *            timeout, which must never end early or with EINTR
 *   sleeponly  every thread in timed sleeps, the main thread's of 5 ms
 *            between its calls: recce must borrow a sleeping thread and
 *            put it back into the same sleep
 *   relsleep  the same without clock_nanosleep(TIMER_ABSTIME), which the
 *            kernel makes again from the start: every sleep is one the
 *            kernel resumes from its own record of it
 *   wait     blocked for good in a futex (pthread_cond_wait), epoll_wait
 *            and accept, none of which may return, and a thread that
 *            runs /bin/true through vfork and execve in a loop
 *   signals  a 1 kHz SIGALRM handled on an alternate stack, a thread with
 *            every signal blocked, a SIGTRAP handler of the program's own
 *   fork     a thread forking (with 256 MiB to copy) and reaping children
 *   churn    threads created and joined all the time, up to 300 at once
 *   forkwork on each SIGUSR1 the main thread forks a child that says
 *            "child PID" and goes on calling work() without a word
 *   seccomp-kill  a filter that kills the process on openat (recce must
 *            refuse), and a reader to borrow
 *   seccomp-ok    a filter that refuses reboot and kills on kexec_load
 *            (recce may inject), and a reader to borrow
 *
 * Prints "ready" once its threads run, then every 50 ms "calls=N new=N
 * bad=N s0=N s1=N s2=N" (new: results from the replacement; sN: sleeps
 * sleeper N has ended).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORK __attribute__((noinline, noclone))

static atomic_long calls, new_calls, bad;
static atomic_long slept[3]; /* sleeps each sleeper thread has ended */
static int pipefd[2];

static void fail(const char *what)
{
	fprintf(stderr, "torture: %s\n", what);
	abort();
}

/* The function the test patches: fixes/torture-fix.c returns the same
 * and says so with *who = 2. */
WORK long work(long x, long *who)
{
	*who = 1;
	return x * 3 + 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Loads known values into every general register the compiler lets go
 * and four vector registers, spins, and checks them all. */
static void *spin(void *arg)
{
	(void)arg;
	for (;;) {
		long diff;
		__asm__ volatile(
		    "mov $0x1111, %%rbx\n\tmov $0x2222, %%rcx\n\tmov $0x3333, %%rdx\n\t"
		    "mov $0x4444, %%rsi\n\tmov $0x5555, %%rdi\n\tmov $0x6666, %%r8\n\t"
		    "mov $0x7777, %%r9\n\tmov $0x8888, %%r10\n\tmov $0x9999, %%r11\n\t"
		    "mov $0xaaaa, %%r12\n\tmov $0xbbbb, %%r13\n\tmov $0xcccc, %%r14\n\t"
		    "mov $0xdddd, %%r15\n\tmovq %%rbx, %%xmm2\n\tmovq %%rcx, %%xmm3\n\t"
		    "movq %%rdx, %%xmm4\n\tmovq %%rsi, %%xmm5\n\t"
		    "mov $200000, %%eax\n"
		    "1:\tdec %%eax\n\tjnz 1b\n\t"
		    "xor $0x1111, %%rbx\n\txor $0x2222, %%rcx\n\txor $0x3333, %%rdx\n\t"
		    "xor $0x4444, %%rsi\n\txor $0x5555, %%rdi\n\txor $0x6666, %%r8\n\t"
		    "xor $0x7777, %%r9\n\txor $0x8888, %%r10\n\txor $0x9999, %%r11\n\t"
		    "xor $0xaaaa, %%r12\n\txor $0xbbbb, %%r13\n\txor $0xcccc, %%r14\n\t"
		    "xor $0xdddd, %%r15\n\tor %%rcx, %%rbx\n\tor %%rdx, %%rbx\n\t"
		    "or %%rsi, %%rbx\n\tor %%rdi, %%rbx\n\tor %%r8, %%rbx\n\t"
		    "or %%r9, %%rbx\n\tor %%r10, %%rbx\n\tor %%r11, %%rbx\n\t"
		    "or %%r12, %%rbx\n\tor %%r13, %%rbx\n\tor %%r14, %%rbx\n\t"
		    "or %%r15, %%rbx\n\tmovq %%xmm2, %%rcx\n\txor $0x1111, %%rcx\n\t"
		    "or %%rcx, %%rbx\n\tmovq %%xmm3, %%rcx\n\txor $0x2222, %%rcx\n\t"
		    "or %%rcx, %%rbx\n\tmovq %%xmm4, %%rcx\n\txor $0x3333, %%rcx\n\t"
		    "or %%rcx, %%rbx\n\tmovq %%xmm5, %%rcx\n\txor $0x4444, %%rcx\n\t"
		    "or %%rcx, %%rbx\n\tmov %%rbx, %0"
		    : "=m"(diff)
		    :
		    : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12",
		      "r13", "r14", "r15", "xmm2", "xmm3", "xmm4", "xmm5", "cc");
		if (diff)
			fail("spin: a register changed under the thread");
	}
	return NULL;
}

static void *libc_user(void *arg)
{
	char src[4096];
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (;;) {
		size_t n = 16 + rand_r(&seed) % 4000;
		memset(src, (int)(n & 0xff), n);
		char *p = malloc(n);
		if (!p)
			fail("libc: malloc failed");
		errno = 0;
		memcpy(p, src, n);
		if (memcmp(p, src, n) != 0 || errno != 0)
			fail("libc: memcpy or errno changed");
		free(p);
	}
	return NULL;
}

/* Loads the lazy library, calls it 64 times through PLT slots bound anew
 * on every load (on every call with LD_BIND_NOT=1), checks each result
 * and errno, unloads it. */
static void *lazy_user(void *arg)
{
	const char *path = arg;

	for (long i = 0;; i++) {
		void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
		if (!h)
			fail("lazy: dlopen failed");
		long (*entry)(long, long, long, long, long, long) =
		    (long (*)(long, long, long, long, long, long))dlsym(h, "lazy_entry");
		if (!entry)
			fail("lazy: no lazy_entry");
		for (long k = i; k < i + 64; k++) {
			errno = EDOM;
			long r = entry(k, k + 1, k + 2, k + 3, k + 4, k + 5);
			if (errno != EDOM)
				fail("lazy: errno changed");
			long want =
			    k + 2 * (k + 1) + 3 * (k + 2) + 4 * (k + 3) + 5 * (k + 4) + 6 * (k + 5);
			if (r != want)
				fail("lazy: a wrong result");
		}
		if (dlclose(h) != 0)
			fail("lazy: dlclose failed");
	}
	return NULL;
}

static void *vdso_user(void *arg)
{
	(void)arg;
	uint64_t last = 0;
	for (;;) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		struct timeval tv;
		if (t < last || gettimeofday(&tv, NULL) != 0)
			fail("vdso: the clock went back or gettimeofday failed");
		last = t;
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	uint64_t want = 0, got;
	for (;;) {
		errno = 0;
		ssize_t n = read(pipefd[0], &got, sizeof(got));
		if (n != (ssize_t)sizeof(got) || got != want)
			fail(n < 0 && errno == EINTR ? "read: EINTR" : "read: lost or wrong data");
		want++;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	long kind = (long)arg;
	for (int i = 0;; i++) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		int rc;
		if (kind == 0) {
			struct timespec ts = {0, 10000000};
			rc = nanosleep(&ts, NULL);
		} else if (kind == 1) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			if (rc) {
				errno = rc;
				rc = -1;
			}
		} else {
			rc = poll(NULL, 0, 10);
		}
		if (rc != 0)
			fail(errno == EINTR ? "sleep: EINTR" : "sleep: failed");
		if (now_ns(CLOCK_MONOTONIC) - t0 < 10000000)
			fail("sleep: ended early");
		slept[kind]++;
	}
	return NULL;
}

static atomic_long alarms;
static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	alarms++;
	errno = saved;
}

static void on_trap(int sig)
{
	(void)sig;
	fail("signals: the program's own SIGTRAP handler ran");
}

static void *blocked_spinner(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		sigset_t now;
		pthread_sigmask(SIG_BLOCK, NULL, &now);
		if (!sigismember(&now, SIGUSR1) || !sigismember(&now, SIGALRM))
			fail("signals: the blocked mask changed");
	}
	return NULL;
}

static void start_signals(void)
{
	static char alt[1 << 16];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGALRM, &sa, NULL) != 0)
		fail("signals: setup");
	sa.sa_handler = on_trap;
	sa.sa_flags = 0;
	sigaction(SIGTRAP, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void *forker(void *arg)
{
	(void)arg;
	size_t len = 256u << 20;
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		fail("fork: mmap");
	memset(mem, 1, len);
	for (;;) {
		pid_t c = fork();
		if (c == 0)
			_exit(mem[len / 2] == 1 ? 0 : 1);
		int st;
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("fork: the child failed");
	}
	return NULL;
}

static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *futex_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&never_lock);
	for (;;) {
		pthread_cond_wait(&never, &never_lock);
		fail("wait: pthread_cond_wait returned without a signal");
	}
	return NULL;
}

static void *epoll_waiter(void *arg)
{
	(void)arg;
	int ep = epoll_create1(0);
	struct epoll_event ev;
	for (;;) {
		int n = epoll_wait(ep, &ev, 1, -1);
		if (n != -1 || errno != EINTR)
			fail(n < 0 ? "wait: epoll_wait failed"
				   : "wait: epoll_wait returned an event");
		/* EINTR: what any stop under ptrace gives epoll_wait, a
		 * debugger's too (signal(7)); the program asks again. */
	}
	return NULL;
}

static void *acceptor(void *arg)
{
	(void)arg;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0)
		fail("wait: cannot listen");
	for (;;) {
		int c = accept(s, NULL, NULL);
		fail(c < 0 ? "wait: accept failed" : "wait: accept returned a connection");
	}
	return NULL;
}

static void *vforker(void *arg)
{
	(void)arg;
	for (;;) {
		pid_t c = vfork();
		if (c == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		int st;
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("wait: vfork and execve of /bin/true failed");
	}
	return NULL;
}

static volatile sig_atomic_t fork_asked;
static void on_usr1(int sig)
{
	(void)sig;
	fork_asked = 1;
}

static void *short_life(void *arg)
{
	return arg;
}

static void *churner(void *arg)
{
	(void)arg;
	pthread_t t[300];
	for (;;) {
		for (int i = 0; i < 300; i++)
			if (pthread_create(&t[i], NULL, short_life, NULL) != 0)
				fail("churn: pthread_create");
		for (int i = 0; i < 300; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

/* Allows everything but nr, which gets action. */
static void filter(long nr, uint32_t action, long nr2, uint32_t action2)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, action),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr2, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, action2),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		fail("seccomp: cannot install the filter");
}

static void start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg) != 0)
		fail("pthread_create");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	int feed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipefd) != 0)
		fail("pipe");
	if (strcmp(mode, "spin") == 0) {
		start(spin, NULL);
		start(spin, NULL);
	} else if (strcmp(mode, "libc") == 0) {
		start(libc_user, (void *)1);
		start(libc_user, (void *)2);
	} else if (strcmp(mode, "lazy") == 0 && argc > 2) {
		start(lazy_user, argv[2]);
		start(lazy_user, argv[2]);
	} else if (strcmp(mode, "vdso") == 0) {
		start(vdso_user, NULL);
		start(vdso_user, NULL);
	} else if (strcmp(mode, "read") == 0) {
		start(reader, NULL);
		feed = 1;
	} else if (strcmp(mode, "sleep") == 0) {
		start(sleeper, (void *)0);
		start(sleeper, (void *)1);
		start(sleeper, (void *)2);
		start(reader, NULL);
		feed = 1;
	} else if (strcmp(mode, "sleeponly") == 0) {
		start(sleeper, (void *)0);
		start(sleeper, (void *)1);
		start(sleeper, (void *)2);
	} else if (strcmp(mode, "relsleep") == 0) {
		start(sleeper, (void *)0);
		start(sleeper, (void *)2);
	} else if (strcmp(mode, "wait") == 0) {
		start(futex_waiter, NULL);
		start(epoll_waiter, NULL);
		start(acceptor, NULL);
		start(vforker, NULL);
	} else if (strcmp(mode, "signals") == 0) {
		start_signals();
		start(blocked_spinner, NULL);
		start(spin, NULL);
	} else if (strcmp(mode, "fork") == 0) {
		start(forker, NULL);
	} else if (strcmp(mode, "forkwork") == 0) {
		signal(SIGUSR1, on_usr1);
	} else if (strcmp(mode, "churn") == 0) {
		start(churner, NULL);
		start(spin, NULL);
	} else if (strcmp(mode, "seccomp-kill") == 0 || strcmp(mode, "seccomp-ok") == 0) {
		/* Threads first: the filter reaches them all (TSYNC). */
		start(reader, NULL);
		feed = 1;
		if (mode[8] == 'k')
			filter(SYS_openat, SECCOMP_RET_KILL_PROCESS, SYS_openat,
			       SECCOMP_RET_KILL_PROCESS);
		else
			filter(SYS_reboot, SECCOMP_RET_ERRNO | EPERM, SYS_kexec_load,
			       SECCOMP_RET_KILL_PROCESS);
	} else {
		fprintf(stderr, "torture: unknown mode %s\n", mode);
		return 2;
	}
	printf("ready\n");
	uint64_t last = now_ns(CLOCK_MONOTONIC), seq = 0;
	int quiet = 0;
	for (long i = 0;; i++) {
		if (fork_asked) {
			fork_asked = 0;
			pid_t c = fork();
			if (c == 0) {
				printf("child %d\n", (int)getpid());
				quiet = 1;
			}
		}
		long who = 0;
		long r = work(i, &who);
		if (r != i * 3 + 1 || (who != 1 && who != 2)) {
			bad++;
			if (quiet)
				fail("child: a wrong result");
		}
		calls++;
		if (who == 2)
			new_calls++;
		if (feed && write(pipefd[1], &seq, sizeof(seq)) == (ssize_t)sizeof(seq))
			seq++;
		if (!quiet && now_ns(CLOCK_MONOTONIC) - last > 50000000) {
			printf("calls=%ld new=%ld bad=%ld s0=%ld s1=%ld s2=%ld\n", (long)calls,
			       (long)new_calls, (long)bad, (long)slept[0], (long)slept[1],
			       (long)slept[2]);
			last = now_ns(CLOCK_MONOTONIC);
		}
		if (strcmp(mode, "sleeponly") == 0 || strcmp(mode, "relsleep") == 0) {
			struct timespec ts = {0, 5000000};
			uint64_t t0 = now_ns(CLOCK_MONOTONIC);
			int rc = nanosleep(&ts, NULL);
			uint64_t took = now_ns(CLOCK_MONOTONIC) - t0;
			if (rc != 0 || took < 5000000) {
				fprintf(stderr,
					"torture: main: nanosleep returned %d (%s) after %llu ns\n",
					rc, rc ? strerror(errno) : "no error",
					(unsigned long long)took);
				fail("main: a sleep ended early");
			}
		} else {
			usleep(200);
		}
	}
}
