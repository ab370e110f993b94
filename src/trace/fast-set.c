/*
 * Probes without the kernel (see fast-set.h): the library loaded, the
 * shared file, the trampolines, the jumps, and the rings read back as
 * uprobe hits.
 */
#include "trace/fast-set.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/fast-format.h"
#include "inject/code-write.h"
#include "inject/near-page.h"
#include "inject/relocate.h"
#include "inject/target-mem.h"
#include "symbols/func-exits.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/clock.h"

#define JUMP_LEN      5
#define TRAMP_SIZE    128 /* bytes of a trampoline, one after another in a page */
#define TRAMP_PAGES   (16u << 10)
#define TRAMP_NAME    "recce-trace"
#define CODE_READ_MAX (256u << 10)
#define SLOTS	      64u
#define RING_RECORDS  (64u << 10)
#define LIB_NAME      "librecce-fast.so"

/* One traced function. */
struct fast_site {
	uint64_t addr, tramp;
	uint32_t len; /* bytes the jump replaces */
	int probe;
	uint8_t orig[RECCE_FAST_CODE], jump[RECCE_FAST_CODE];
	uint8_t code[TRAMP_SIZE]; /* the trampoline */
	size_t code_len;
	uint64_t resume; /* its relocated instructions */
};

struct fast_set {
	pid_t pid;
	struct injector inj;
	int inj_open;
	uint64_t hit_fn; /* recce_fast_hit in the process */
	struct recce_fast_header *h;
	size_t map_len;
	struct fast_site *sites;
	size_t nsites, cap;
	uint64_t page, page_used; /* the trampoline page being filled */
	int attached;
	struct fast_set_info *info;
	/* The CPU's clock against CLOCK_MONOTONIC: two readings of each. */
	uint64_t tsc0, mono0, tsc1, mono1;
};

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static void clock_pair(uint64_t *tsc, uint64_t *mono)
{
	*tsc = rdtsc();
	*mono = time_now_ns(CLOCK_MONOTONIC);
}

const char *fast_refusal(pid_t pid, uint64_t addr, uint64_t size)
{
	uint8_t head[32], out[RELOCATE_MAX];
	size_t out_len, taken;

	if (size && size < JUMP_LEN)
		return "shorter than the 5-byte jump";
	size_t n = size && size < sizeof(head) ? size : sizeof(head);
	if (tmem_read(pid, addr, head, n) != 0)
		return "its code cannot be read";
	switch (relocate_entry(head, n, addr, JUMP_LEN, addr, out, sizeof(out), &out_len, &taken)) {
	case 0:
		break;
	case -EXDEV:
		return "its first instructions jump into each other";
	case -ENOTSUP:
		return "its first instructions cannot be moved (loop, jrcxz or xbegin)";
	default:
		return "its first instructions do not decode";
	}
	if (!size)
		return NULL;
	size_t len = size < CODE_READ_MAX ? size : CODE_READ_MAX;
	uint8_t *code = malloc(len);
	const char *why = NULL;
	size_t at;
	if (!code)
		return "out of memory";
	if (tmem_read(pid, addr, code, len) != 0)
		why = "its code cannot be read";
	else if (func_branch_into(code, len, addr, addr + 1, addr + taken, &at) == 1)
		why = "its code jumps back into its first bytes";
	free(code);
	return why;
}

/* Where librecce-fast.so is: $RECCE_FAST_LIB, beside the recce binary
 * in a build tree, or in the installed tree. */
static int find_library(char *buf, size_t len, struct fast_set_info *info)
{
	const char *env = getenv("RECCE_FAST_LIB");
	char exe[PATH_MAX];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -ENOENT;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	static const char *const rel[] = {"lib/" LIB_NAME, "build/lib/" LIB_NAME,
					  "../lib/recce/" LIB_NAME};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/%s", exe, rel[i]);
		if (access(path, R_OK) == 0 && realpath(path, buf))
			return 0;
	}
	snprintf(info->detail, sizeof(info->detail), "%.200s/lib, %.200s/../lib/recce", exe, exe);
	return -ENOENT;
}

/* The shared file, owned by the target's user: made, mapped here, and
 * its header filled. */
static int make_file(struct fast_set *s, char *path, size_t len)
{
	struct stat st;
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/%d", (int)s->pid);
	if (stat(proc, &st) != 0)
		return -ESRCH;
	snprintf(path, len, "/dev/shm/recce-fast-%d-%d-%08x", (int)s->pid, (int)getpid(),
		 (unsigned)rdtsc());
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* Whole pages, so that the library can map a slot's pages at once. */
	uint64_t slot_size = (sizeof(struct recce_fast_slot) +
			      (uint64_t)RING_RECORDS * sizeof(struct recce_fast_record) + 4095) &
			     ~4095ull;
	s->map_len = RECCE_FAST_HEADER_SIZE + SLOTS * slot_size;
	int err = 0;
	if (fchown(fd, st.st_uid, st.st_gid) != 0 && geteuid() == 0)
		err = -errno;
	if (!err && ftruncate(fd, (off_t)s->map_len) != 0)
		err = -errno;
	void *m =
	    err ? MAP_FAILED : mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		unlink(path);
		return err ? err : -errno;
	}
	s->h = m;
	memcpy(s->h->magic, RECCE_FAST_MAGIC, 8);
	s->h->version = RECCE_FAST_VERSION;
	s->h->header_size = RECCE_FAST_HEADER_SIZE;
	s->h->slots = SLOTS;
	s->h->ring_records = RING_RECORDS;
	s->h->record_size = sizeof(struct recce_fast_record);
	s->h->slot_size = slot_size;
	s->h->file_size = s->map_len;
	s->h->recce_pid = (int32_t)getpid();
	s->h->target_pid = (int32_t)s->pid;
	s->h->enabled = 1;
	return 0;
}

/* The address in the process of symbol name of the loaded library. */
static int library_symbol(struct symbolizer *sym, pid_t pid, const char *lib, const char *name,
			  uint64_t *addr)
{
	struct sym_file *f;
	uint64_t v;

	int err = symbolizer_open(sym, lib, -1, &f);
	if (!err && symbolizer_find_symbol(sym, f, name, &v, NULL) != 0)
		err = -ENOENT;
	return err ? err : injector_where(sym, pid, f, v, addr);
}

static int fail(struct fast_set_info *info, enum fast_failure why, int err)
{
	info->failure = why;
	return err;
}

static int start(struct fast_set *s, struct symbolizer *sym, struct fast_set_info *info)
{
	char path[128];
	uint64_t handle, start_fn, ret;

	int err = find_library(info->library, sizeof(info->library), info);
	if (err)
		return fail(info, FAST_NO_LIBRARY, err);
	err = injector_open(&s->inj, s->pid, sym);
	s->inj_open = !err;
	if (err == -EPROTONOSUPPORT) {
		info->inject_refusal = s->inj.refusal;
		return fail(info, FAST_INJECT, err);
	}
	if (err)
		return err;
	if ((err = make_file(s, path, sizeof(path))) != 0)
		return fail(info, FAST_FILE, err);
	err = injector_dlopen(&s->inj, info->library, &handle, info->detail, sizeof(info->detail));
	info->stopped_ns = s->inj.stopped_ns;
	if (err == -ENOEXEC)
		err = fail(info, FAST_LOAD, err);
	else if (err == -EAGAIN || err == -EPROTONOSUPPORT)
		info->inject_refusal = s->inj.refusal, err = fail(info, FAST_INJECT, err);
	if (!err)
		err = library_symbol(sym, s->pid, info->library, "recce_fast_start", &start_fn);
	if (!err)
		err = library_symbol(sym, s->pid, info->library, "recce_fast_hit", &s->hit_fn);
	if (err == -ENOENT)
		err = fail(info, FAST_LOAD, err);
	if (!err) {
		uint64_t args[6] = {0, (uint64_t)getpid(), 0, 0, 0, 0};
		err = injector_call(&s->inj, start_fn, args, path, strlen(path) + 1, 0, &ret);
		if (s->inj.stopped_ns > info->stopped_ns)
			info->stopped_ns = s->inj.stopped_ns;
		if (!err && (int64_t)ret < 0)
			err = fail(info, FAST_START, (int)(int64_t)ret);
	}
	/* Shared by the two processes alone from here. */
	unlink(path);
	return err;
}

int fast_set_new(pid_t pid, struct symbolizer *sym, struct fast_set **out,
		 struct fast_set_info *info)
{
	uint64_t t0 = time_now_ns(CLOCK_MONOTONIC);
	struct fast_set *s = calloc(1, sizeof(*s));

	memset(info, 0, sizeof(*info));
	*out = s;
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	s->info = info;
	clock_pair(&s->tsc0, &s->mono0);
	int err = start(s, sym, info);
	clock_pair(&s->tsc1, &s->mono1);
	info->inject_ns = time_now_ns(CLOCK_MONOTONIC) - t0;
	return err;
}

/* The trampoline of site f at address at: the registers pushed, the
 * recorder called with (site, frame), the registers popped, then the
 * moved instructions and the jump back. */
static int build_trampoline(struct fast_set *s, struct fast_site *f, uint32_t index,
			    const uint8_t *head, size_t n)
{
	static const uint8_t push[] = {0x57, 0x56, 0x52, 0x51, 0x41, 0x50, 0x41,
				       0x51, 0x50, 0x41, 0x52, 0x41, 0x53};
	static const uint8_t pop[] = {0x41, 0x5b, 0x41, 0x5a, 0x58, 0x41, 0x59,
				      0x41, 0x58, 0x59, 0x5a, 0x5e, 0x5f};
	uint8_t *b = f->code;
	size_t at = 0, moved, taken;

	memcpy(b, push, sizeof(push));
	at += sizeof(push);
	b[at++] = 0x48, b[at++] = 0xc7, b[at++] = 0xc7; /* mov rdi, imm32 */
	memcpy(b + at, &index, 4);
	at += 4;
	b[at++] = 0x48, b[at++] = 0x89, b[at++] = 0xe6; /* mov rsi, rsp */
	b[at++] = 0x48, b[at++] = 0xb8;			/* movabs rax, hit */
	memcpy(b + at, &s->hit_fn, 8);
	at += 8;
	b[at++] = 0xff, b[at++] = 0xd0; /* call rax */
	memcpy(b + at, pop, sizeof(pop));
	at += sizeof(pop);
	f->resume = f->tramp + at;
	int err = relocate_entry(head, n, f->addr, JUMP_LEN, f->resume, b + at, TRAMP_SIZE - at,
				 &moved, &taken);
	if (err)
		return err;
	f->code_len = at + moved;
	f->len = (uint32_t)taken;
	memcpy(f->orig, head, taken);
	/* jmp rel32 to the trampoline, then int3 over what is left of the
	 * instructions it replaced. */
	int32_t rel = (int32_t)(int64_t)(f->tramp - (f->addr + JUMP_LEN));
	f->jump[0] = 0xe9;
	memcpy(f->jump + 1, &rel, 4);
	memset(f->jump + JUMP_LEN, 0xcc, taken - JUMP_LEN);
	return 0;
}

/* A trampoline's place within reach of addr. */
static int tramp_slot(struct fast_set *s, uint64_t addr, uint64_t *slot)
{
	if (s->page && s->page_used + TRAMP_SIZE <= TRAMP_PAGES &&
	    near_reaches(addr, s->page + s->page_used) &&
	    near_reaches(s->page + s->page_used + TRAMP_SIZE, addr)) {
		*slot = s->page + s->page_used;
		s->page_used += TRAMP_SIZE;
		return 0;
	}
	int err = near_page_map(&s->inj, addr, TRAMP_PAGES, TRAMP_NAME, &s->page);
	if (err)
		return err;
	s->page_used = TRAMP_SIZE;
	*slot = s->page;
	return 0;
}

int fast_set_add(struct fast_set *s, uint64_t addr, uint64_t size, int probe)
{
	uint8_t head[32];
	size_t n = size && size < sizeof(head) ? size : sizeof(head);

	if (s->nsites >= RECCE_FAST_SITES)
		return -E2BIG;
	struct fast_site *v = array_reserve(s->sites, &s->cap, s->nsites + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->sites = v;
	struct fast_site *f = &s->sites[s->nsites];
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->probe = probe;
	int err = tmem_read(s->pid, addr, head, n);
	if (!err)
		err = tramp_slot(s, addr, &f->tramp);
	if (!err)
		err = build_trampoline(s, f, (uint32_t)s->nsites, head, n);
	if (!err)
		s->nsites++;
	return err;
}

int fast_set_attach(struct fast_set *s, int timeout_ms)
{
	struct code_edit *e = calloc(s->nsites ? s->nsites : 1, sizeof(*e));
	struct code_guard *g = calloc(s->nsites ? s->nsites : 1, sizeof(*g));
	int err = e && g ? 0 : -ENOMEM;

	/* The trampolines first, in pages no thread runs in yet; then the
	 * sites, so that the library always knows what to put back. */
	for (size_t i = 0; i < s->nsites && !err; i++) {
		struct fast_site *f = &s->sites[i];
		err = tmem_write(s->pid, f->tramp, f->code, f->code_len);
		struct recce_fast_site *w = &s->h->sites[i];
		w->addr = f->addr;
		w->resume = f->resume;
		w->len = f->len;
		memcpy(w->orig, f->orig, f->len);
		memcpy(w->code, f->jump, f->len);
		w->state = RECCE_FAST_SITE_USED;
		e[i].addr = f->addr;
		e[i].len = f->len;
		memcpy(e[i].old, f->orig, f->len);
		memcpy(e[i].new, f->jump, f->len);
		g[i] = (struct code_guard){f->addr + 1, f->addr + f->len};
	}
	__atomic_store_n(&s->h->nsites, (uint32_t)s->nsites, __ATOMIC_RELEASE);
	struct code_write_stats st = {0};
	size_t stale = 0;
	if (!err)
		err = code_write(s->pid, e, s->nsites, g, s->nsites, timeout_ms, &st, &stale);
	if (st.stopped_max_ns > s->info->stopped_ns)
		s->info->stopped_ns = st.stopped_max_ns;
	s->info->threads_stopped = st.threads;
	s->attached = !err;
	free(e);
	free(g);
	/* The stub's padding is put back; trampoline pages stay. */
	injector_close(&s->inj);
	s->inj_open = 0;
	return err;
}

/* CLOCK_MONOTONIC of a CPU clock reading, from the two pairs. */
static uint64_t tsc_to_mono(const struct fast_set *s, uint64_t tsc)
{
	if (s->tsc1 <= s->tsc0)
		return s->mono1;
	__int128 d = (__int128)((int64_t)(tsc - s->tsc0)) * (int64_t)(s->mono1 - s->mono0);
	return s->mono0 + (uint64_t)(int64_t)(d / (int64_t)(s->tsc1 - s->tsc0));
}

static struct recce_fast_slot *slot_at(const struct fast_set *s, uint32_t i)
{
	return (struct recce_fast_slot *)((char *)s->h + RECCE_FAST_HEADER_SIZE +
					  (uint64_t)i * s->h->slot_size);
}

int fast_set_read(struct fast_set *s, int (*cb)(const struct uprobe_hit *, void *), void *arg)
{
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);
	uint64_t chain[2];
	int rc = 0;

	if (claimed > SLOTS)
		claimed = SLOTS;
	clock_pair(&s->tsc1, &s->mono1);
	for (uint32_t i = 0; i < claimed && !rc; i++) {
		struct recce_fast_slot *sl = slot_at(s, i);
		const struct recce_fast_record *recs = (const void *)(sl + 1);
		uint64_t head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
		uint64_t tail = sl->tail;
		if (head - tail > RING_RECORDS)
			tail = head - RING_RECORDS; /* never: the writer does not overwrite */
		for (; tail < head && !rc; tail++) {
			const struct recce_fast_record *r = &recs[tail & (RING_RECORDS - 1)];
			if (r->site >= s->nsites)
				continue;
			const struct fast_site *f = &s->sites[r->site];
			struct uprobe_hit h;
			memset(&h, 0, sizeof(h));
			h.probe = f->probe;
			h.pid = (uint32_t)s->pid;
			h.tid = (uint32_t)r->tid;
			h.time = tsc_to_mono(s, r->tsc);
			h.gpr[X86_RDI] = h.args[0] = r->args[0];
			h.gpr[X86_RSI] = h.args[1] = r->args[1];
			h.gpr[X86_RDX] = h.args[2] = r->args[2];
			h.gpr[X86_RCX] = h.args[3] = r->args[3];
			h.gpr[X86_R8] = h.args[4] = r->args[4];
			h.gpr[X86_R9] = h.args[5] = r->args[5];
			h.gpr[X86_RAX] = h.ret = r->rax;
			h.gpr[X86_RSP] = h.sp = r->sp;
			h.ip = f->addr;
			h.has_regs = 1;
			chain[0] = f->addr;
			chain[1] = r->ra;
			h.chain = chain;
			h.nchain = 2;
			rc = cb(&h, arg);
		}
		__atomic_store_n(&sl->tail, tail, __ATOMIC_RELEASE);
	}
	return rc;
}

uint64_t fast_set_lost(const struct fast_set *s)
{
	uint64_t lost = __atomic_load_n(&s->h->no_slot, __ATOMIC_RELAXED);
	uint32_t claimed = __atomic_load_n(&s->h->claimed, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < claimed && i < SLOTS; i++)
		lost += __atomic_load_n(&slot_at(s, i)->lost, __ATOMIC_RELAXED);
	return lost;
}

int fast_set_remove_all(struct fast_set *s)
{
	if (!s || !s->h)
		return 0;
	__atomic_store_n(&s->h->enabled, 0, __ATOMIC_RELAXED);
	if (!s->attached)
		return 0;
	struct code_edit *e = calloc(s->nsites ? s->nsites : 1, sizeof(*e));
	struct code_guard *g = calloc(s->nsites ? s->nsites : 1, sizeof(*g));
	int err = e && g ? 0 : -ENOMEM;
	for (size_t i = 0; i < s->nsites && !err; i++) {
		const struct fast_site *f = &s->sites[i];
		e[i].addr = f->addr;
		e[i].len = f->len;
		memcpy(e[i].old, f->jump, f->len);
		memcpy(e[i].new, f->orig, f->len);
		g[i] = (struct code_guard){f->addr + 1, f->addr + f->len};
	}
	struct code_write_stats st = {0};
	size_t stale = 0;
	if (!err)
		err = code_write(s->pid, e, s->nsites, g, s->nsites, 2000, &st, &stale);
	if (err == -ESRCH)
		err = 0; /* the process is gone, and its code with it */
	if (!err) {
		s->attached = 0;
		/* The watchdog leaves; were recce to die before this, it
		 * would find the bytes put back and leave them. */
		__atomic_store_n(&s->h->detach, 1, __ATOMIC_RELEASE);
	}
	free(e);
	free(g);
	return err;
}

void fast_set_free(struct fast_set *s)
{
	if (!s)
		return;
	if (s->inj_open)
		injector_close(&s->inj);
	if (s->h) {
		/* Nothing patched any more: the watchdog may go. When the bytes
		 * could not be put back, it stays, and puts them back as recce
		 * exits. */
		if (!s->attached)
			__atomic_store_n(&s->h->detach, 1, __ATOMIC_RELEASE);
		munmap(s->h, s->map_len);
	}
	free(s->sites);
	free(s);
}
