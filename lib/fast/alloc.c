/*
 * The allocation recorder of librecce-fast.so, for `recce record -e alloc
 * --fast` (inject/fast-format.h, RECCE_FAST_MODE_ALLOC): the trampolines
 * on the allocator's entries and exits call recce_fast_alloc, which
 * samples in the process and writes only what recce needs, so that a
 * program making a million allocations a second pays tens of nanoseconds
 * for each instead of a uprobe's trap.
 *
 * Sampling is a countdown of bytes per thread, restarted at each sample
 * from a table of random draws recce fills (exponential, of mean the
 * interval), as the kernel's allocation program does per CPU. A sampled
 * call writes the caller's registers and a copy of the top of its stack,
 * for recce to unwind as it unwinds a perf sample; its exit writes the
 * address, which goes into a table of the sampled addresses in use; a
 * free (or realloc) of an address in that table writes it. Every other
 * call writes nothing.
 *
 * Nesting: a thread inside a sampled call (pending_sp, the address of its
 * return address) samples no call made deeper in its stack (the
 * allocator calling itself); a call found at or above it means the
 * sampled one left by a way not hooked, and it is let go (recce counts its
 * sample unmatched). glibc's realloc(NULL, n) and aligned allocations of
 * alignment 16 or less call malloc, whose own hook samples them.
 *
 * The rules of the library hold: no lock, no system call but at a
 * thread's first record (where /proc/self/maps tells its stack), no allocation, no vector register
 * (a stack copy is a loop of words).
 */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"
#include "perf/alloc-format.h"

/* How far below its top the main thread's stack may have grown. */
#define STACK_GROWS (8ull << 20)

/* The sampled addresses in use: buckets of 8 words (a cache line), an
 * address in the one its hash picks; 0 is a free word. A lookup of an
 * address not sampled, which is every free but a few, reads one line. */
#define LIVE_BITS 13
#define LIVE_WAYS 8
static uint64_t live[1u << LIVE_BITS][LIVE_WAYS] __attribute__((aligned(64)));

static uint64_t *bucket(uint64_t addr)
{
	return live[((addr >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - LIVE_BITS)];
}

static int live_add(uint64_t addr)
{
	uint64_t *b = bucket(addr);

	for (int i = 0; i < LIVE_WAYS; i++) {
		uint64_t zero = 0;
		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&b[i], &zero, addr, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 0;
	}
	return -1;
}

static int live_take(uint64_t addr)
{
	uint64_t *b = bucket(addr);

	for (int i = 0; i < LIVE_WAYS; i++) {
		uint64_t a = addr;
		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) == addr &&
		    __atomic_compare_exchange_n(&b[i], &a, 0, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

/* A countdown drawn at random from recce's table: each sample is
 * independent of the others, as in a Poisson process of bytes (taken in
 * turn, the table's one cycle would repeat the same few phases against a
 * program's regular pattern of allocations). xorshift64. */
static int64_t next_draw(const struct recce_fast_header *h)
{
	uint64_t x = fast_me.rng ? fast_me.rng : 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	fast_me.rng = x;
	return h->alloc_draws[(x >> 20) & (RECCE_FAST_ALLOC_DRAWS - 1)];
}

void fast_alloc_start(void)
{
	/* Addresses sampled by an earlier trace are nobody's now. */
	for (uint32_t i = 0; i < (1u << LIVE_BITS); i++)
		for (int j = 0; j < LIVE_WAYS; j++)
			__atomic_store_n(&live[i][j], 0, __ATOMIC_RELAXED);
}

/* Reads a hexadecimal number at *p, moving past it. */
static uint64_t hex(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	return v;
}

/* The mapping of /proc/self/maps that holds sp: [*lo, *hi), and whether
 * it is the main thread's [stack] (which grows down past *lo). No
 * allocation, no stdio. 0, or -1 when none does. */
static int stack_mapping(uint64_t sp, uint64_t *lo, uint64_t *hi, int *grows)
{
	char buf[4096];
	size_t keep = 0;
	ssize_t n;
	int found = -1;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (found < 0 && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + (size_t)n;
		const char *p = buf, *end = buf + len;
		for (;;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				break;
			const char *q = p;
			uint64_t a = hex(&q, nl);
			uint64_t b = q < nl && *q == '-' ? (q++, hex(&q, nl)) : 0;
			if (sp >= a && sp < b) {
				*lo = a;
				*hi = b;
				*grows = memmem(p, (size_t)(nl - p), "[stack]", 7) != NULL;
				found = 0;
				break;
			}
			p = nl + 1;
		}
		keep = (size_t)(end - p);
		if (keep == sizeof(buf))
			keep = 0; /* a line longer than the buffer: not a stack's */
		memmove(buf, p, keep);
	}
	close(fd);
	return found;
}

void fast_alloc_claimed(struct recce_fast_header *h)
{
	uint64_t lo = 0, hi = 0;
	int grows = 0;
	uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);

	fast_me.pending_sp = 0;
	fast_me.rng = fast_rdtsc() ^ (uint64_t)(uint32_t)fast_me.tid << 32 ^ 0x9e3779b97f4a7c15ull;
	fast_me.left = next_draw(h);
	fast_me.stack_lo = fast_me.stack_hi = 0;
	if (stack_mapping(here, &lo, &hi, &grows) < 0)
		return;
	/* The main thread's stack may grow down: as far as 8 MiB below its
	 * top, where nothing else is mapped (the kernel keeps mmap's base
	 * further down than that, whatever the stack's limit). */
	if (grows && hi - lo < STACK_GROWS)
		lo = hi - STACK_GROWS;
	fast_me.stack_lo = lo;
	fast_me.stack_hi = hi;
}

/* Room for n records in the thread's ring: the index of the first, or
 * -1 when the ring is full (counted lost). */
static int64_t room(uint64_t n)
{
	struct recce_fast_slot *s = fast_me.slot;
	uint64_t head = s->head;

	if (head + n - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) > fast_me.mask + 1) {
		s->lost++;
		return -1;
	}
	return (int64_t)head;
}

static struct recce_fast_record *record_at(uint64_t i)
{
	return &fast_me.recs[i & fast_me.mask];
}

static void publish(uint64_t head)
{
	__atomic_store_n(&fast_me.slot->head, head, __ATOMIC_RELEASE);
}

/* The record at index at, of event ev at hook, its value set. */
static struct recce_fast_record *begin(uint64_t at, uint32_t hook, uint64_t ev, uint64_t value)
{
	struct recce_fast_record *r = record_at(at);

	r->tsc = fast_rdtsc();
	r->site = hook;
	r->tid = fast_me.tid;
	r->pid = fast_me.pid;
	r->args[0] = ev;
	r->args[1] = value;
	return r;
}

/* One record of event ev at hook. */
static void put(uint32_t hook, uint64_t ev, uint64_t value, uint64_t flags)
{
	int64_t at = room(1);

	if (at < 0)
		return;
	begin((uint64_t)at, hook, ev, value)->args[2] = flags;
	publish((uint64_t)at + 1);
}

/* Copies n bytes from src into the records from index at on, starting
 * off bytes into the first; a loop of words, never a vector register. */
static void copy_out(uint64_t at, size_t off, const uint64_t *src, size_t words)
{
	const size_t per = sizeof(struct recce_fast_record) / 8;

	for (size_t i = 0; i < words; i++, off++) {
		uint64_t *w = (uint64_t *)record_at(at + off / per);
		w[off % per] = src[i];
	}
}

/* A sampled call at hook of size bytes: its record, the registers saved
 * (rbx rbp r12 r13 r14 r15) and its stack from sp (the return address's
 * place) up. Returns 0, or -1 when it was lost. */
static int sample(struct recce_fast_header *h, uint32_t hook, uint64_t size, uint64_t sp,
		  const uint64_t *saved)
{
	uint64_t bytes = 0;
	uint32_t want = __atomic_load_n(&h->alloc_stack, __ATOMIC_RELAXED);

	if (want > RECCE_FAST_ALLOC_STACK)
		want = RECCE_FAST_ALLOC_STACK;
	if (sp >= fast_me.stack_lo && sp < fast_me.stack_hi) {
		bytes = fast_me.stack_hi - sp < want ? fast_me.stack_hi - sp : want;
		bytes &= ~(uint64_t)7;
	} else {
		__atomic_fetch_add(&h->alloc_no_stack, 1, __ATOMIC_RELAXED);
	}
	uint64_t extra = recce_fast_alloc_extra(bytes);
	int64_t at = room(1 + extra);
	if (at < 0)
		return -1;
	struct recce_fast_record *r = begin((uint64_t)at, hook, ALLOC_EV_SAMPLE, size);
	r->args[2] = *(const uint64_t *)(uintptr_t)sp;
	r->args[3] = bytes;
	r->args[4] = sp;
	copy_out((uint64_t)at + 1, 0, saved, RECCE_FAST_ALLOC_REGS);
	copy_out((uint64_t)at + 1, RECCE_FAST_ALLOC_REGS, (const uint64_t *)(uintptr_t)sp,
		 (size_t)(bytes / 8));
	publish((uint64_t)at + 1 + extra);
	return 0;
}

/* The entry of a function of kind k: frees written, the allocation's
 * size returned (0: not one to sample). */
static uint64_t at_entry(uint32_t hook, uint8_t k, const uint64_t *frame)
{
	uint64_t a0 = frame[8], a1 = frame[7], a2 = frame[6];
	int glibc = (k & RECCE_FAST_ALLOC_GLIBC) != 0;

	switch (k & RECCE_FAST_ALLOC_KIND) {
	case ALLOC_FN_FREE:
		if (a0 && live_take(a0))
			put(hook, ALLOC_EV_FREE, a0, 0);
		return 0;
	case ALLOC_FN_REALLOC:
		if (a0 && live_take(a0))
			put(hook, ALLOC_EV_FREE, a0, 0);
		return a0 || !glibc ? a1 : 0;
	case ALLOC_FN_MALLOC:
		return a0;
	case ALLOC_FN_CALLOC:
		return a1 && a0 > UINT64_MAX / a1 ? UINT64_MAX : a0 * a1;
	case ALLOC_FN_ALIGNED:
		return glibc && a0 <= ALLOC_GLIBC_MALLOC_ALIGN ? 0 : a1;
	case ALLOC_FN_POSIX_MEMALIGN:
		fast_me.pending_result = a0;
		return glibc && a1 <= ALLOC_GLIBC_MALLOC_ALIGN ? 0 : a2;
	default:
		return 0;
	}
}

/* An exit of the sampled call in flight: its result. */
static void at_exit(struct recce_fast_header *h, uint32_t hook, uint8_t k, const uint64_t *frame)
{
	uint64_t addr = frame[2], flags = 0;

	fast_me.pending_sp = 0;
	if (k & RECCE_FAST_ALLOC_JUMP) {
		/* Left by a jump to another function: its result is that
		 * one's, not seen here; but for glibc's calloc, which ends
		 * with memset(mem, 0, n), whose result is mem (a block glibc
		 * gives, 16-byte aligned: another jump's first argument is
		 * not taken for one). */
		if ((k & RECCE_FAST_ALLOC_KIND) == ALLOC_FN_CALLOC &&
		    (k & RECCE_FAST_ALLOC_GLIBC) && frame[8] && !(frame[8] & 15))
			addr = frame[8];
		else {
			put(hook, ALLOC_EV_RETURN, 0, RECCE_FAST_ALLOC_UNKNOWN);
			return;
		}
	}
	if ((k & RECCE_FAST_ALLOC_KIND) == ALLOC_FN_POSIX_MEMALIGN)
		addr = addr == 0 && fast_me.pending_result
			   ? *(const uint64_t *)(uintptr_t)fast_me.pending_result
			   : 0;
	if (addr && live_add(addr) < 0) {
		__atomic_fetch_add(&h->alloc_untracked, 1, __ATOMIC_RELAXED);
		flags |= RECCE_FAST_ALLOC_UNTRACKED;
	}
	put(hook, ALLOC_EV_RETURN, addr, flags);
}

/* Called by recce_fast_alloc: hook is the hook's index, frame the
 * registers the trampoline pushed (r11 r10 rax r9 r8 rcx rdx rsi rdi,
 * then the return address), saved the callee-saved ones. */
__attribute__((used)) HIDDEN void fast_alloc_hit(uint64_t hook, const uint64_t *frame,
						 const uint64_t *saved)
{
	struct recce_fast_header *h = fast_cur;

	if (!h || fast_forked || !__atomic_load_n(&h->enabled, __ATOMIC_RELAXED) || fast_me.busy ||
	    hook >= RECCE_FAST_ALLOC_HOOKS)
		return;
	uint8_t k = h->alloc_kind[hook];
	if (!k)
		return;
	fast_me.busy = 1;
	if (fast_writer_ready(h) < 0) {
		fast_me.busy = 0;
		return;
	}
	uint64_t sp = (uint64_t)(uintptr_t)&frame[9];
	if (k & (RECCE_FAST_ALLOC_RET | RECCE_FAST_ALLOC_JUMP)) {
		if (fast_me.pending_sp == sp)
			at_exit(h, (uint32_t)hook, k, frame);
		fast_me.busy = 0;
		return;
	}
	uint64_t size = at_entry((uint32_t)hook, k, frame);
	if (fast_me.pending_sp && sp < fast_me.pending_sp)
		size = 0; /* inside a sampled call: the allocator's own */
	else
		fast_me.pending_sp = 0; /* the one sampled left unseen */
	if (size) {
		fast_me.left -= (int64_t)(size > INT64_MAX ? INT64_MAX : size);
		if (fast_me.left <= 0) {
			fast_me.left = next_draw(h);
			if (sample(h, (uint32_t)hook, size, sp, saved) == 0)
				fast_me.pending_sp = sp;
		}
	}
	fast_me.busy = 0;
}

/* The recorder the trampolines call: the callee-saved registers, as the
 * allocator's caller left them, saved for fast_alloc_hit(hook, frame,
 * saved), the stack kept aligned. */
__asm__(".text\n"
	".globl recce_fast_alloc\n"
	".type recce_fast_alloc, @function\n"
	"recce_fast_alloc:\n"
	".cfi_startproc\n"
	"	sub $56, %rsp\n"
	".cfi_adjust_cfa_offset 56\n"
	"	mov %rbx, 0(%rsp)\n"
	"	mov %rbp, 8(%rsp)\n"
	"	mov %r12, 16(%rsp)\n"
	"	mov %r13, 24(%rsp)\n"
	"	mov %r14, 32(%rsp)\n"
	"	mov %r15, 40(%rsp)\n"
	"	mov %rsp, %rdx\n"
	"	call fast_alloc_hit\n"
	"	add $56, %rsp\n"
	".cfi_adjust_cfa_offset -56\n"
	"	ret\n"
	".cfi_endproc\n"
	".size recce_fast_alloc, .-recce_fast_alloc\n");
