/*
 * librecce-fast.so: the library `recce trace --fast` (and `recce record
 * -e alloc --fast`, whose recorder is alloc.c's) loads into a running
 * process. recce calls recce_fast_start() in the process (inject/); from
 * then on the trampolines recce writes call recce_fast_hit() at each
 * traced call, which writes the call's registers into the calling
 * thread's ring in the shared file (inject/fast-format.h).
 *
 * The recorder runs at the entry of any function of the program, on any
 * thread, in a signal handler too: it takes no lock, makes no system call
 * after its thread's first record, never allocates, and touches no
 * vector register (built with -mgeneral-regs-only: the floating-point
 * arguments of the traced call are still in them).
 *
 * A watchdog thread watches recce through a pidfd. If recce dies, however
 * it dies, the watchdog puts back every site's original bytes, without
 * stopping the other threads, the way the kernel's text_poke_bp does: an
 * int3 on the first byte (a thread that reaches it is sent on to the
 * relocated instructions by a SIGTRAP handler), then the other bytes, then
 * the first byte, with every CPU's instruction stream serialized
 * (membarrier) between steps. The trampolines stay: a thread may still be
 * in one.
 *
 * A child the process forks while traced is traced too (fast-format.h):
 * in the child, before fork returns there (one thread, nothing else
 * runs), the forking thread lets go of its parent's ring, the child takes
 * an entry of the children's table and starts a watchdog of its own, which
 * puts the child's bytes back the same way when recce says the trace is
 * over, or dies. A child that cannot (the table full, no thread) gets
 * every site's original bytes back at once and records nothing, and is
 * counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "inject/fast-format.h"
#include "internal.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define MEMBARRIER_REGISTER_SYNC_CORE 64 /* MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE */
#define MEMBARRIER_SYNC_CORE	      32 /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE */
#define MADV_POPULATE_WRITE_	      23
#define WATCH_MS		      100
#define TRAP_GRACE_MS		      200

struct recce_fast_header *volatile fast_cur;
volatile uint32_t fast_starts;
volatile int fast_forked;
__thread struct writer fast_me __attribute__((tls_model("initial-exec")));

/* Where trace files are mapped. A file is never unmapped, since a thread
 * may still be writing into it: at its trace's end its range becomes
 * private zero pages. The next trace maps its file over that range when
 * it fits, so the range stays the only one however many traces run.
 * user: the start number of the trace whose file is in it, 0 when free.
 * map_lock orders the starts and the watchdogs' let_go. */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	void *at;
	size_t len;
	uint32_t user;
} region;

/* What a watchdog lets go of at its trace's end. */
struct watch {
	struct recce_fast_header *h;
	size_t len;   /* the file's size, as checked at the start */
	uint32_t gen; /* its trace's start number */
	int child;    /* a child's: children[child - 1] is its entry; 0: the traced process's */
};

/* The geometry of the file cur, as checked when it was started: the
 * header's own fields are shared memory, which the process (or anyone
 * who can write the file) may change under the library, so slots are
 * found by this copy only. */
static struct {
	struct recce_fast_header *file;
	uint32_t slots;
	uint64_t header_size, slot_size, ring_records, file_size;
} geo;

/* CPU clock ticks between two looks for a slot of a thread that found
 * none (about a millisecond): each look may ask the kernel of every slot. */
#define RETRY_TICKS (1ull << 21)

static struct recce_fast_slot *slot_at(struct recce_fast_header *h, uint32_t i)
{
	return (struct recce_fast_slot *)((char *)h + geo.header_size +
					  (uint64_t)i * geo.slot_size);
}

/* Marks the exiting thread's slot GONE, for a new thread to take. A
 * destructor after this one that calls a traced function claims a slot
 * again, and this runs again for it. Also at the process's exit, for
 * the thread that calls exit(). */
static pthread_key_t exit_key;
static int exit_key_made;

static void thread_gone(void *v)
{
	struct recce_fast_slot *s = fast_me.slot;

	(void)v;
	/* Off the slot first: a signal handler's call from here on claims
	 * another, never writes to one recce may free. */
	fast_me.file = NULL;
	fast_me.slot = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t mine = RECCE_FAST_OWNER(fast_me.tid, RECCE_FAST_SLOT_TAKEN);
	if (s)
		__atomic_compare_exchange_n(&s->owner, &mine,
					    RECCE_FAST_OWNER(fast_me.tid, RECCE_FAST_SLOT_GONE), 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void process_gone(void)
{
	thread_gone(NULL);
}

/* The trace file as /proc/PID/maps names it: " MM:mm INODE " (its
 * device and inode), set as a trace starts; "" before. */
static char file_id[48];

/* Appends v to buf at *at in base 10 or 16, at least width digits (no
 * stdio in this library). */
static void put_num(char *buf, size_t *at, unsigned long long v, unsigned base, int width)
{
	char d[24];
	int n = 0;

	do {
		d[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && n < (int)sizeof(d));
	while (n < width && n < (int)sizeof(d))
		d[n++] = '0';
	while (n)
		buf[(*at)++] = d[--n];
}

static void set_file_id(dev_t dev, ino_t ino)
{
	size_t at = 0;

	file_id[at++] = ' ';
	put_num(file_id, &at, major(dev), 16, 2);
	file_id[at++] = ':';
	put_num(file_id, &at, minor(dev), 16, 2);
	file_id[at++] = ' ';
	put_num(file_id, &at, ino, 10, 1);
	file_id[at++] = ' ';
	file_id[at] = '\0';
}

/* Whether process pid still maps the trace file: 0 when it does not (it
 * ran another program, exec, or is gone), 1 when it does or when that
 * cannot be read. Reads /proc/PID/maps with no allocation. */
static int maps_file(int32_t pid)
{
	char path[32], buf[4096 + sizeof(file_id)];
	size_t keep = 0, idlen = strlen(file_id);
	ssize_t n = 0;
	int found = 0;

	if (!idlen)
		return 1;
	size_t at = sizeof("/proc/") - 1;
	memcpy(path, "/proc/", at);
	put_num(path, &at, (unsigned long long)pid, 10, 1);
	memcpy(path + at, "/maps", sizeof("/maps"));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + (size_t)n;
		found = memmem(buf, len, file_id, idlen) != NULL;
		/* A name cut by the end of this read is whole in the next. */
		keep = len < idlen ? len : idlen - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found || n < 0;
}

/* Whether the thread of a slot's owner word is gone: it exited without a
 * word, or its process did, or ran another program (exec). Unsure is
 * alive. */
static int owner_gone(const struct recce_fast_slot *s, uint64_t w)
{
	int32_t tid = RECCE_FAST_OWNER_ID(w);
	int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);

	return tid > 0 && pid > 0 &&
	       ((syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH) || !maps_file(pid));
}

/* A slot a thread that exited left, taken (CLAIMING) by the calling
 * thread, which is its ring's only writer from here, going on from where
 * the old one stopped; with takeover, a slot whose thread is gone
 * without a word. UINT32_MAX if none. The owner word proves, as it
 * changes, that no one else took it first. */
static uint32_t reuse(struct recce_fast_header *h, int takeover)
{
	uint32_t n = __atomic_load_n(&h->claimed, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < geo.slots && i < n; i++) {
		struct recce_fast_slot *s = slot_at(h, i);
		uint64_t w = __atomic_load_n(&s->owner, __ATOMIC_ACQUIRE);
		uint32_t st = RECCE_FAST_OWNER_STATE(w);
		if ((st == RECCE_FAST_SLOT_GONE ||
		     (takeover && st == RECCE_FAST_SLOT_TAKEN && owner_gone(s, w))) &&
		    __atomic_compare_exchange_n(
			&s->owner, &w, RECCE_FAST_OWNER(fast_me.tid, RECCE_FAST_SLOT_CLAIMING), 0,
			__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return i;
	}
	return UINT32_MAX;
}

/* Claims a slot of h for the calling thread: a fresh one, else one a
 * thread that exited left, else one of a thread gone without a word; 0,
 * or -1 when none is left. */
static int claim(struct recce_fast_header *h, uint32_t start)
{
	if (geo.file != h)
		return -1; /* never: cur and geo are set together */
	if (fast_me.retry && (int64_t)(fast_rdtsc() - fast_me.retry) < 0) {
		__atomic_fetch_add(&h->no_slot, 1, __ATOMIC_RELAXED);
		return -1;
	}
	fast_me.tid = (int32_t)syscall(SYS_gettid);
	fast_me.pid = (int32_t)getpid();
	uint32_t i = __atomic_load_n(&h->claimed, __ATOMIC_RELAXED);
	for (;;) {
		if (i >= geo.slots) {
			if ((i = reuse(h, 0)) != UINT32_MAX || (i = reuse(h, 1)) != UINT32_MAX)
				break;
			fast_me.retry = fast_rdtsc() + RETRY_TICKS;
			__atomic_fetch_add(&h->no_slot, 1, __ATOMIC_RELAXED);
			return -1;
		}
		if (__atomic_compare_exchange_n(&h->claimed, &i, i + 1, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&slot_at(h, i)->owner,
					 RECCE_FAST_OWNER(fast_me.tid, RECCE_FAST_SLOT_CLAIMING),
					 __ATOMIC_RELAXED);
			break;
		}
	}
	fast_me.retry = 0;
	char *base = (char *)slot_at(h, i);
	fast_me.slot = (struct recce_fast_slot *)base;
	fast_me.recs = (struct recce_fast_record *)(base + sizeof(struct recce_fast_slot));
	fast_me.mask = geo.ring_records - 1;
	__atomic_store_n(&fast_me.slot->pid, fast_me.pid, __ATOMIC_RELAXED);
	__atomic_store_n(&fast_me.slot->owner, RECCE_FAST_OWNER(fast_me.tid, RECCE_FAST_SLOT_TAKEN),
			 __ATOMIC_RELEASE);
	fast_me.file = h;
	fast_me.start = start;
	/* Told at exit (no allocation below 32 keys; without it the slot
	 * is only never reused). */
	if (exit_key_made)
		pthread_setspecific(exit_key, (void *)1);
	/* The ring's pages, mapped now rather than one fault every 42
	 * records; where the kernel cannot, they fault in as written. */
	madvise(base, geo.slot_size, MADV_POPULATE_WRITE_);
	return 0;
}

int fast_writer_claim(struct recce_fast_header *h, uint32_t start)
{
	/* The program's errno stays its own: a claim asks the kernel. */
	int saved = errno;
	int err = claim(h, start);
	if (!err && h->mode == RECCE_FAST_MODE_ALLOC)
		fast_alloc_claimed(h);
	errno = saved;
	return err;
}

/*
 * Called by a trampoline: site is the site's index; frame points at the
 * registers it pushed, r11 r10 rax r9 r8 rcx rdx rsi rdi, and above them
 * the traced call's return address.
 */
EXPORT void recce_fast_hit(uint64_t site, const uint64_t *frame)
{
	struct recce_fast_header *h = fast_cur;

	if (!h || fast_forked || !__atomic_load_n(&h->enabled, __ATOMIC_RELAXED) || fast_me.busy)
		return;
	fast_me.busy = 1;
	if (fast_writer_ready(h) < 0) {
		fast_me.busy = 0;
		return;
	}
	struct recce_fast_slot *s = fast_me.slot;
	uint64_t head = s->head;
	if (head - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) > fast_me.mask) {
		s->lost++;
		fast_me.busy = 0;
		return;
	}
	struct recce_fast_record *r = &fast_me.recs[head & fast_me.mask];
	r->tsc = fast_rdtsc();
	r->site = (uint32_t)site;
	r->tid = fast_me.tid;
	r->args[0] = frame[8];
	r->args[1] = frame[7];
	r->args[2] = frame[6];
	r->args[3] = frame[5];
	r->args[4] = frame[4];
	r->args[5] = frame[3];
	r->rax = frame[2];
	r->sp = (uint64_t)(uintptr_t)&frame[9];
	r->ra = frame[9];
	r->pid = fast_me.pid;
	__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
	fast_me.busy = 0;
}

/* The sites as the watchdog restores them: a private copy, taken when
 * recce died, so that nothing written into the file afterwards steers
 * the code the watchdog writes. */
static struct recce_fast_site restoring[RECCE_FAST_SITES];
static volatile uint32_t nrestoring;
static struct sigaction old_trap;

/* A thread that reached an int3 the watchdog put on a site goes on with
 * the site's relocated instructions, as if the jump were still there
 * minus the record. Anything else is the program's own trap. */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t at = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;

	for (uint32_t i = 0; i < nrestoring; i++)
		if (restoring[i].addr == at) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)restoring[i].resume;
			return;
		}
	if (old_trap.sa_flags & SA_SIGINFO && old_trap.sa_sigaction)
		old_trap.sa_sigaction(sig, si, ctx);
	else if (old_trap.sa_handler != SIG_DFL && old_trap.sa_handler != SIG_IGN)
		old_trap.sa_handler(sig);
	else {
		sigaction(SIGTRAP, &old_trap, NULL);
		raise(SIGTRAP);
	}
}

static void serialize(int have_membarrier)
{
	if (have_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_SYNC_CORE, 0, 0);
}

static int poke(int mem, uint64_t addr, const void *b, size_t len)
{
	return pwrite(mem, b, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

/* Whether site s is patched here: its jump, or a step of its removal
 * (an int3 first, each other byte the jump's or the original's), which
 * a child forked in the middle of one inherits. */
static int patched(const struct recce_fast_site *s)
{
	const uint8_t *at = (const uint8_t *)(uintptr_t)s->addr;

	if (s->state != RECCE_FAST_SITE_USED || s->len < 2 || s->len > RECCE_FAST_CODE ||
	    memcmp(at, s->orig, s->len) == 0 || (at[0] != s->code[0] && at[0] != 0xcc))
		return 0;
	for (uint32_t i = 1; i < s->len; i++)
		if (at[i] != s->code[i] && at[i] != s->orig[i])
			return 0;
	return 1;
}

/* The sites still patched here, copied into restoring[] (nothing written
 * into the file afterwards steers what is put back): how many. */
static uint32_t find_patched(struct recce_fast_header *h)
{
	uint32_t n = 0, max = h->nsites < RECCE_FAST_SITES ? h->nsites : RECCE_FAST_SITES;

	for (uint32_t i = 0; i < max; i++) {
		struct recce_fast_site s = h->sites[i];
		if (patched(&s))
			restoring[n++] = s;
	}
	return n;
}

/* Puts back the original bytes of every site still patched; returns how
 * many. */
static uint64_t restore_all(struct recce_fast_header *h)
{
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem < 0)
		return 0;
	int have_membarrier = syscall(SYS_membarrier, MEMBARRIER_REGISTER_SYNC_CORE, 0, 0) == 0;
	uint32_t n = find_patched(h);
	if (!n) {
		close(mem);
		return 0;
	}
	nrestoring = n;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, &old_trap);
	static const uint8_t int3 = 0xcc;
	for (uint32_t i = 0; i < n; i++)
		poke(mem, restoring[i].addr, &int3, 1);
	serialize(have_membarrier);
	for (uint32_t i = 0; i < n; i++)
		poke(mem, restoring[i].addr + 1, restoring[i].orig + 1, restoring[i].len - 1);
	serialize(have_membarrier);
	uint64_t done = 0;
	for (uint32_t i = 0; i < n; i++)
		done += poke(mem, restoring[i].addr, restoring[i].orig, 1) == 0;
	serialize(have_membarrier);
	close(mem);
	/* A thread that took the int3 just before the last write gets its
	 * SIGTRAP on its way back to user space: let it, then hand SIGTRAP
	 * back to the program. */
	struct timespec grace = {0, TRAP_GRACE_MS * 1000000L};
	nanosleep(&grace, NULL);
	sigaction(SIGTRAP, &old_trap, NULL);
	return done;
}

/* The trace is over: the file's pages go back to the system. A thread
 * that entered the recorder just before may still write a record: the
 * range stays mapped, as private zero pages, for the next trace to map
 * its file over. */
static void let_go(const struct watch *w)
{
	pthread_mutex_lock(&map_lock);
	/* Unless a newer trace has its own file already. */
	if (fast_starts == w->gen)
		__atomic_store_n(&fast_cur, NULL, __ATOMIC_RELEASE);
	/* The size checked at the start, never the header's: a wrong one
	 * would map zeros over the process's other memory. In the region,
	 * unless a newer trace took it over (take_over). */
	int in_region = (void *)w->h == region.at;
	if (!in_region || region.user == w->gen)
		mmap(w->h, w->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
	if (in_region && region.user == w->gen)
		region.user = 0;
	pthread_mutex_unlock(&map_lock);
}

/* A child's entry DONE: its bytes are back (unless a newer child took
 * it, when this one exited and this thread was the last to know). */
static void child_done(uint64_t *owner)
{
	uint64_t w = RECCE_FAST_OWNER(getpid(), RECCE_FAST_CHILD_TRACED);

	__atomic_compare_exchange_n(owner, &w, RECCE_FAST_OWNER(getpid(), RECCE_FAST_CHILD_DONE), 0,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void *watchdog(void *arg)
{
	struct watch w = *(struct watch *)arg;
	struct recce_fast_header *h = w.h;
	/* A child's watchdog tells of itself in its entry: watch and
	 * restored are the traced process's. */
	uint64_t *done = w.child ? &h->children[w.child - 1].owner : NULL;

	free(arg);
	int pfd = (int)syscall(SYS_pidfd_open, h->recce_pid, 0);

	for (;;) {
		if (__atomic_load_n(&h->detach, __ATOMIC_ACQUIRE)) {
			/* recce put the traced process's bytes back itself;
			 * a child's are its watchdog's to put back. */
			if (done) {
				restore_all(h);
				child_done(done);
			} else
				__atomic_store_n(&h->watch, RECCE_FAST_LEFT, __ATOMIC_RELEASE);
			break;
		}
		int gone;
		if (pfd >= 0) {
			struct pollfd p = {pfd, POLLIN, 0};
			gone = poll(&p, 1, WATCH_MS) > 0;
		} else {
			/* No pidfd (an old kernel): ask every WATCH_MS. */
			struct timespec ts = {0, WATCH_MS * 1000000L};
			nanosleep(&ts, NULL);
			gone = kill(h->recce_pid, 0) != 0 && errno == ESRCH;
		}
		if (gone && !__atomic_load_n(&h->detach, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&h->enabled, 0, __ATOMIC_RELAXED);
			uint64_t n = restore_all(h);
			if (done)
				child_done(done);
			else {
				__atomic_store_n(&h->restored, n, __ATOMIC_RELEASE);
				__atomic_store_n(&h->watch, RECCE_FAST_RESTORED, __ATOMIC_RELEASE);
			}
			break;
		}
	}
	if (pfd >= 0)
		close(pfd);
	let_go(&w);
	return NULL;
}

/* Starts the watchdog of w (which it frees), with every signal blocked,
 * so that none meant for the program is handled on it. 0 or an error. */
static int start_watchdog(struct watch *w)
{
	pthread_attr_t attr;
	pthread_t th;
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	int err = pthread_create(&th, &attr, watchdog, w);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(th, RECCE_FAST_WATCHDOG);
	return err;
}

/* Takes an entry of the children's table for the calling process, the
 * child just forked: a free one, or one whose child is gone or ran
 * another program (exec). Its index, or -1 when every entry is a traced
 * child's. */
static int take_entry(struct recce_fast_header *h)
{
	uint64_t mine = RECCE_FAST_OWNER(getpid(), RECCE_FAST_CHILD_TRACED);

	for (int gone = 0; gone < 2; gone++)
		for (uint32_t i = 0; i < RECCE_FAST_CHILDREN; i++) {
			uint64_t *o = &h->children[i].owner;
			uint64_t w = __atomic_load_n(o, __ATOMIC_ACQUIRE);
			int32_t pid = RECCE_FAST_OWNER_ID(w);
			int free_ = RECCE_FAST_OWNER_STATE(w) == RECCE_FAST_CHILD_FREE;
			if ((free_ ||
			     (gone && pid > 0 &&
			      ((kill(pid, 0) != 0 && errno == ESRCH) || !maps_file(pid)))) &&
			    __atomic_compare_exchange_n(o, &w, mine, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				return (int)i;
		}
	return -1;
}

/* Traces the child just forked (its one thread): an entry and a
 * watchdog of its own. 0, or -1 when it cannot. */
static int follow(struct recce_fast_header *h)
{
	int i = take_entry(h);
	if (i < 0)
		return -1;
	struct watch *w = malloc(sizeof(*w));
	if (w) {
		*w = (struct watch){h, geo.file_size, fast_starts, i + 1};
		if (start_watchdog(w) == 0)
			return 0;
		free(w);
	}
	__atomic_store_n(&h->children[i].owner, 0, __ATOMIC_RELEASE);
	return -1;
}

/* In a child just forked, its one thread, before fork returns: traced
 * like its parent, or, when it cannot be, its sites' original bytes
 * written straight back. */
static void child_starts(void)
{
	struct recce_fast_header *h = fast_cur;

	/* A watchdog of the parent may have held it: none runs here. */
	pthread_mutex_init(&map_lock, NULL);
	/* The forking thread's ring is its parent's: a slot of its own,
	 * at its first record. */
	memset(&fast_me, 0, sizeof(fast_me));
	if (!h || fast_forked)
		return;
	/* Over: the bytes are back, or the parent's watchdog puts them
	 * back, as this one's does. */
	if (__atomic_load_n(&h->detach, __ATOMIC_ACQUIRE) ||
	    (__atomic_load_n(&h->enabled, __ATOMIC_ACQUIRE) && follow(h) == 0))
		return;
	fast_forked = 1;
	if (__atomic_load_n(&h->enabled, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&h->forks, 1, __ATOMIC_RELAXED);
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem < 0)
		return;
	/* One thread, nothing else runs: each site written at once. */
	for (uint32_t i = 0, n = find_patched(h); i < n; i++)
		poke(mem, restoring[i].addr, restoring[i].orig, restoring[i].len);
	close(mem);
}

static void in_child(void)
{
	int saved = errno; /* fork returns with the program's own */

	child_starts();
	errno = saved;
}

/* Under map_lock: frees the region from the trace in it when that trace
 * is over (recce said so) and its watchdog has only let_go left, which
 * then leaves the region alone. A watchdog sees the end within WATCH_MS:
 * waited for, a second at most, so that back-to-back traces share one
 * range. Never while a watchdog may still read the file (restoring after
 * recce died): it would read the new one. */
static void take_over(size_t len)
{
	struct recce_fast_header *o = region.at;

	if (region.len < len || !__atomic_load_n(&o->detach, __ATOMIC_ACQUIRE))
		return;
	for (int i = 0;
	     i < 1000 && __atomic_load_n(&o->watch, __ATOMIC_ACQUIRE) == RECCE_FAST_WATCHING; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	uint32_t w = __atomic_load_n(&o->watch, __ATOMIC_ACQUIRE);
	if (w != RECCE_FAST_LEFT && w != RECCE_FAST_RESTORED)
		return;
	if (fast_starts == region.user)
		__atomic_store_n(&fast_cur, NULL, __ATOMIC_RELEASE);
	/* All of it zeros first: the new file may be shorter. */
	mmap(region.at, region.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
	     -1, 0);
	region.user = 0;
}

/* Maps a trace file of len bytes, under map_lock: over the free region
 * when it fits, else anew (the region then, when there was none or it
 * was too small: a smaller old one stays as it is). */
static void *map_file(int fd, size_t len)
{
	if (region.user)
		take_over(len);
	if (!region.user && region.at && region.len >= len) {
		void *m =
		    mmap(region.at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (m != MAP_FAILED)
			return m;
		/* A failed MAP_FIXED may have unmapped the range: zeros
		 * again, for a late writer of an earlier trace. */
		int err = errno;
		mmap(region.at, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		errno = err;
		return MAP_FAILED;
	}
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED && !region.user && (!region.at || region.len < len)) {
		region.at = m;
		region.len = len;
	}
	return m;
}

/*
 * Maps the file at path, made by recce (pid recce_pid), and starts the
 * watchdog. Returns 0 or -errno. Called by recce in a borrowed thread,
 * every signal blocked, which the watchdog inherits.
 */
EXPORT long recce_fast_start(const char *path, long recce_pid)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Shared by the two processes alone from here: no name left behind,
	 * whenever recce dies. */
	unlink(path);
	struct recce_fast_header probe;
	if (pread(fd, &probe, sizeof(probe), 0) != (ssize_t)sizeof(probe)) {
		close(fd);
		return -EINVAL;
	}
	if (memcmp(probe.magic, RECCE_FAST_MAGIC, 8) != 0 || probe.version != RECCE_FAST_VERSION ||
	    probe.header_size != RECCE_FAST_HEADER_SIZE ||
	    probe.record_size != sizeof(struct recce_fast_record) ||
	    probe.slot_size < sizeof(struct recce_fast_slot) ||
	    (probe.ring_records & (probe.ring_records - 1)) || !probe.ring_records ||
	    probe.file_size < probe.header_size + (uint64_t)probe.slots * probe.slot_size ||
	    probe.slot_size < sizeof(struct recce_fast_slot) +
				  (uint64_t)probe.ring_records * sizeof(struct recce_fast_record)) {
		close(fd);
		return -EINVAL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0)
		set_file_id(st.st_dev, st.st_ino);
	struct watch *w = malloc(sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&map_lock);
	void *m = map_file(fd, probe.file_size);
	close(fd);
	if (m == MAP_FAILED) {
		int err = errno;
		pthread_mutex_unlock(&map_lock);
		free(w);
		return -err;
	}
	uint32_t gen = fast_starts + 1;
	/* Whatever this process was in an earlier trace (a child of a
	 * traced process), it is the one traced now. */
	fast_forked = 0;
	if (m == region.at)
		region.user = gen;
	*w = (struct watch){m, probe.file_size, gen, 0};
	struct recce_fast_header *h = m;
	h->recce_pid = (int32_t)recce_pid;
	if (probe.mode == RECCE_FAST_MODE_ALLOC)
		fast_alloc_start();
	static int atfork;
	if (!atfork && pthread_atfork(NULL, NULL, in_child) == 0)
		atfork = 1;
	if (!exit_key_made && pthread_key_create(&exit_key, thread_gone) == 0) {
		exit_key_made = 1;
		/* The thread that calls exit() runs no key destructor. */
		atexit(process_gone);
	}
	geo.file = h;
	geo.slots = probe.slots;
	geo.header_size = probe.header_size;
	geo.slot_size = probe.slot_size;
	geo.ring_records = probe.ring_records;
	geo.file_size = probe.file_size;
	h->watch = RECCE_FAST_WATCHING;
	int err = start_watchdog(w);
	if (err) {
		/* No thread has seen the file: its range is free again. */
		h->watch = 0;
		mmap(m, probe.file_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m == region.at)
			region.user = 0;
		pthread_mutex_unlock(&map_lock);
		free(w);
		return -err;
	}
	fast_starts = gen;
	__atomic_store_n(&fast_cur, h, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&map_lock);
	return 0;
}
