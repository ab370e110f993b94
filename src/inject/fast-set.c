/*
 * Probes without the kernel (see fast-set.h): the library loaded, the
 * shared file, the trampolines, the jumps, and the rings read back as
 * uprobe hits.
 */
#include "inject/fast-set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject/fast-format.h"
#include "inject/code-write.h"
#include "inject/near-page.h"
#include "inject/target-lock.h"
#include "inject/trampoline.h"
#include "inject/target-mem.h"
#include "proc/family.h"
#include "proc/lib-path.h"
#include "proc/procstat.h"
#include "proc/self.h"
#include "proc/tasks.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/lines.h"

#include "inject/fast-set-internal.h"

/* Removes the shared files of earlier traces whose recce is gone: the
 * library unlinks its file as it opens it, so one is left only when
 * recce was killed between making the file and loading the library. A
 * name that is not ours, a file that is not a regular one, or one whose
 * recce still runs is left alone. */
static void sweep_leftovers(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		int target, owner;
		unsigned rnd;
		char tail;
		struct stat st;
		if (sscanf(e->d_name, "recce-fast-%d-%d-%8x%c", &target, &owner, &rnd, &tail) !=
			3 ||
		    owner <= 0 || owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* The threads of pid that may record, at most SLOTS: a watchdog of an
 * earlier trace, which records nothing and is on its way out, is left
 * out, so that traces one after another make files of one size (the
 * library maps each over the last). */
static ssize_t count_threads(pid_t pid)
{
	struct proc_ids tasks;
	struct procstat_reader r;
	struct procstat_task t;

	proc_ids_init(&tasks);
	ssize_t n = proc_ids_list_tasks(&tasks, "/proc", pid, SLOTS), threads = n;
	if (n > 0 && procstat_reader_init(&r, NULL) == 0) {
		for (ssize_t i = 0; i < n; i++)
			if (procstat_read_task(&r, pid, tasks.ids[i], &t) == 0 &&
			    strcmp(t.comm, RECCE_FAST_WATCHDOG) == 0)
				threads--;
		procstat_reader_release(&r);
	}
	proc_ids_release(&tasks);
	return threads;
}

/* The shared file, owned by the target's user: made, mapped here, and
 * its header filled. */
static int make_file(struct fast_set *s, char *path, size_t len)
{
	struct stat st;
	char proc[64];

	sweep_leftovers();
	snprintf(proc, sizeof(proc), "/proc/%d", (int)s->pid);
	if (stat(proc, &st) != 0)
		return -ESRCH;
	snprintf(path, len, "/dev/shm/recce-fast-%d-%d-%08x", (int)s->pid, (int)getpid(),
		 (unsigned)fast_rdtsc());
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* Whole pages, so that the library can map a slot's pages at once. */
	uint64_t slot_size = (sizeof(struct recce_fast_slot) +
			      (uint64_t)RING_RECORDS * sizeof(struct recce_fast_record) + 4095) &
			     ~4095ull;
	/* A ring for each thread there is now and a few more, so that the
	 * target's address space grows by what the trace needs; and one for
	 * each child it has: a process that forks (a server's master) forks
	 * again while traced, and the new children record too. */
	ssize_t threads = count_threads(s->pid);
	pid_t *kids = NULL;
	size_t nkids = 0;
	if (threads > 0 && proc_descendants(s->pid, &kids, &nkids) == 0)
		threads += (ssize_t)(nkids < SLOTS ? nkids : SLOTS);
	free(kids);
	s->slots = threads > 0 ? (uint32_t)threads + SLOTS_SPARE : SLOTS;
	if (s->slots > SLOTS)
		s->slots = SLOTS;
	s->map_len = RECCE_FAST_HEADER_SIZE + s->slots * slot_size;
	s->slot_size = slot_size;
	int err = 0;
	if (fchown(fd, st.st_uid, st.st_gid) != 0 && geteuid() == 0)
		err = -errno;
	if (!err && ftruncate(fd, (off_t)s->map_len) != 0)
		err = -errno;
	struct stat fst;
	if (!err && fstat(fd, &fst) == 0) {
		s->file = (struct proc_file_id){fst.st_dev, fst.st_ino};
	}
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
	s->h->slots = s->slots;
	s->h->ring_records = RING_RECORDS;
	s->h->record_size = sizeof(struct recce_fast_record);
	s->h->slot_size = slot_size;
	s->h->file_size = s->map_len;
	s->h->recce_pid = (int32_t)getpid();
	s->h->target_pid = (int32_t)s->pid;
	if (s->alloc) {
		s->h->mode = RECCE_FAST_MODE_ALLOC;
		s->h->alloc_stack = s->alloc_cfg.stack_bytes < RECCE_FAST_ALLOC_STACK
					? s->alloc_cfg.stack_bytes
					: RECCE_FAST_ALLOC_STACK;
		memcpy(s->h->alloc_draws, s->alloc_cfg.draws, sizeof(s->h->alloc_draws));
	}
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

/* A trampoline's hook numbered: its index in s->hooks. */
static int number_hook(void *arg, int probe, uint64_t ip, uint32_t *id)
{
	struct fast_set *s = arg;
	struct fast_hook *v = array_reserve(s->hooks, &s->hooks_cap, s->nhooks + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->hooks = v;
	*id = (uint32_t)s->nhooks;
	s->hooks[s->nhooks++] = (struct fast_hook){probe, ip};
	return 0;
}

static int start(struct fast_set *s, struct symbolizer *sym, struct fast_set_info *info)
{
	char path[128] = "";
	uint64_t handle, start_fn, ret;

	int err = proc_lib_path(LIB_NAME, "RECCE_FAST_LIB", info->library, sizeof(info->library),
				info->detail, sizeof(info->detail));
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
	err = injector_dlopen(&s->inj, info->library, &handle, info->detail, sizeof(info->detail));
	if (err == -ENOEXEC)
		err = fail(info, FAST_LOAD, err);
	else if (err && s->inj.refusal != INJECT_OK)
		info->inject_refusal = s->inj.refusal, err = fail(info, FAST_INJECT, err);
	if (!err)
		err = library_symbol(sym, s->pid, info->library, "recce_fast_start", &start_fn);
	if (!err)
		err = library_symbol(sym, s->pid, info->library,
				     s->alloc ? "recce_fast_alloc" : "recce_fast_hit", &s->hit_fn);
	s->hooks_fn = (struct tramp_hooks){s->hit_fn, number_hook, s};
	if (err == -ENOENT) {
		/* Loaded, but not this file: an older copy, replaced on disk
		 * since, stays loaded in the process under the same name. */
		snprintf(info->detail, sizeof(info->detail),
			 "it has an older %s loaded, replaced on disk since; restart it to trace "
			 "it with --fast",
			 LIB_NAME);
		err = fail(info, FAST_LOAD, err);
	}
	/* The file last, so that its name lives a moment only: the library
	 * removes it once open, recce at the latest here. */
	if (!err && (err = make_file(s, path, sizeof(path))) != 0)
		return fail(info, FAST_FILE, err);
	if (!err) {
		uint64_t args[6] = {0, (uint64_t)getpid(), 0, 0, 0, 0};
		err = injector_call(&s->inj, start_fn, args, path, strlen(path) + 1, 0, &ret);
		if (!err && (int64_t)ret < 0)
			err = fail(info, FAST_START, (int)(int64_t)ret);
	}
	/* Shared by the two processes alone from here. */
	if (path[0])
		unlink(path);
	return err;
}

/* pid as it sees itself (the last of NSpid in its status), or 0. */
static pid_t ns_pid(pid_t pid)
{
	char path[64];
	uint64_t ids[32]; /* a PID namespace nests 32 deep at most */

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int n = lines_key_numbers(path, "NSpid", ids, 32);
	return n > 0 ? (pid_t)ids[n - 1] : 0;
}

/* Whether pid is in recce's PID namespace, where the pids its children
 * give are recce's too. */
static int same_pid_ns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat("/proc/self/ns/pid", &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int set_new(pid_t pid, struct symbolizer *sym, const struct fast_alloc_config *alloc,
		   struct fast_set **out, struct fast_set_info *info)
{
	struct fast_set *s = calloc(1, sizeof(*s));

	memset(info, 0, sizeof(*info));
	*out = s;
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	if (alloc) {
		s->alloc = 1;
		s->alloc_cfg = *alloc;
	}
	s->same_ns = same_pid_ns(pid);
	s->ns_pid = s->same_ns ? pid : ns_pid(pid);
	fast_set_cal_add(s);
	int err = target_lock(pid, LOCK_WAIT_MS, &s->lock_fd, &info->holder);
	if (err == -EBUSY)
		return fail(info, FAST_LOCKED, err);
	if (err)
		return err;
	return start(s, sym, info);
}

int fast_set_new(pid_t pid, struct symbolizer *sym, struct fast_set **out,
		 struct fast_set_info *info)
{
	return set_new(pid, sym, NULL, out, info);
}

int fast_set_new_alloc(pid_t pid, struct symbolizer *sym, const struct fast_alloc_config *cfg,
		       struct fast_set **out, struct fast_set_info *info)
{
	return set_new(pid, sym, cfg, out, info);
}

size_t fast_set_nhooks(const struct fast_set *s)
{
	return s->nhooks;
}

int fast_set_hook(const struct fast_set *s, size_t id, int *probe, uint64_t *ip)
{
	if (id >= s->nhooks)
		return -ENOENT;
	*probe = s->hooks[id].probe;
	*ip = s->hooks[id].ip;
	return 0;
}

int fast_set_alloc_kind(struct fast_set *s, size_t id, uint8_t kind)
{
	if (!s->alloc || id >= s->nhooks || id >= RECCE_FAST_ALLOC_HOOKS)
		return -EINVAL;
	s->h->alloc_kind[id] = kind;
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
	/* The injector's -EBUSY: stopped by job control, not the function's
	 * short return (add_region's -EBUSY). */
	s->stopped = err == -EBUSY;
	if (err)
		return err;
	s->page_used = TRAMP_SIZE;
	*slot = s->page;
	return 0;
}

/* Region r becomes a site: its trampoline placed and built, its jump
 * made. A plan only when s is NULL. */
static int add_region(struct fast_set *s, const struct tramp_region *r, const uint8_t *code,
		      size_t avail, size_t *taken)
{
	struct fast_site tmp, *f = &tmp;
	size_t nhooks = s ? s->nhooks : 0;

	if (s) {
		if (s->nsites >= RECCE_FAST_SITES)
			return -E2BIG;
		struct fast_site *v = array_reserve(s->sites, &s->cap, s->nsites + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->sites = v;
		f = &s->sites[s->nsites];
	}
	memset(f, 0, sizeof(*f));
	f->addr = r->start;
	int err = s ? tramp_slot(s, r->start, &f->tramp) : 0;
	if (!s)
		f->tramp = r->start; /* in reach of everything the region reaches */
	if (!err)
		err = tramp_build(s ? &s->hooks_fn : NULL, r, code, avail, f->tramp, f->code,
				  sizeof(f->code), &f->code_len, taken);
	if (err == -ENOSPC)
		err = -EMLINK; /* the trampoline's room, not the page's */
	if (!err && (*taken > RECCE_FAST_CODE || *taken < JUMP_LEN))
		err = -EBUSY;
	if (err) {
		if (s)
			s->nhooks = nhooks;
		return err;
	}
	f->len = (uint32_t)*taken;
	memcpy(f->orig, code, *taken);
	/* jmp rel32 to the trampoline, then int3 over what is left of the
	 * instructions it replaced. */
	int32_t rel = (int32_t)(int64_t)(f->tramp - (f->addr + JUMP_LEN));
	f->jump[0] = 0xe9;
	memcpy(f->jump + 1, &rel, 4);
	memset(f->jump + JUMP_LEN, 0xcc, *taken - JUMP_LEN);
	if (s)
		s->nsites++;
	return 0;
}

/* Whether err of add_region() is the function's own (said as a reason),
 * not a failure of the process or of recce: never when the injector
 * found the process stopped (its -EBUSY is not a short return's). s is
 * NULL for a plan alone. */
static int is_reason(const struct fast_set *s, int err)
{
	if (s && s->stopped)
		return 0;
	return err == -EXDEV || err == -ENOTSUP || err == -EBUSY || err == -EILSEQ ||
	       err == -ERANGE || err == -EMLINK;
}

static const char *reason(int err)
{
	switch (err) {
	case -EXDEV:
		return "its first instructions jump into each other";
	case -ENOTSUP:
		return "its first instructions cannot be moved (loop, jrcxz or xbegin)";
	case -EBUSY:
		return "a return of it has fewer than 5 bytes of its own before it";
	case -ERANGE:
		return "its code reaches beyond 2 GiB of where a trampoline can be";
	case -ENOMEM:
		return "out of memory";
	case -EILSEQ:
		return "its first instructions do not decode";
	case -EMLINK:
		return "too many of its returns lie in its first bytes for one trampoline";
	default:
		return strerror(-err);
	}
}

/* The sites of one function, or a plan of them (s NULL): the entry,
 * then a window before each exit outside it. Returns NULL, or why the
 * function cannot be traced so (*err says -errno for a failure that is
 * not the function's). */
static const char *plan(struct fast_set *s, pid_t pid, uint64_t addr, uint64_t size, int probe,
			const struct tramp_exit *exits, size_t nexits, size_t undecided, int *err)
{
	size_t len = size && size < CODE_READ_MAX ? size : (size ? CODE_READ_MAX : 32);
	uint8_t *code = malloc(len);
	const char *why = NULL;
	size_t taken = 0;

	*err = 0;
	if (!code) {
		*err = -ENOMEM;
		return "out of memory";
	}
	if (size && size < JUMP_LEN)
		why = "shorter than the 5-byte jump";
	else if (tmem_read(pid, addr, code, len) != 0)
		why = "its code cannot be read";
	/* An exit whose own window would reach into the entry's bytes is
	 * moved with them: the entry's region grows to its end, when the
	 * whole fits the bytes a site replaces. */
	size_t entry_len = why ? JUMP_LEN : tramp_boundary(code, len, JUMP_LEN);
	if (entry_len == SIZE_MAX)
		entry_len = JUMP_LEN; /* the region's move says what does not decode */
	/* A function that fits the bytes a site replaces moves whole, its
	 * jumps between its own instructions kept. Not one that jumps
	 * through a table: where that lands is not known. */
	if (nexits && size && size <= RECCE_FAST_CODE && !undecided)
		entry_len = size;
	for (int grown = !undecided; grown && !why;) {
		grown = 0;
		for (size_t i = 0; i < nexits; i++) {
			size_t end = (size_t)(exits[i].addr - addr) + exits[i].len;
			if (end > entry_len && end <= RECCE_FAST_CODE &&
			    tramp_window_start(code, len, end) < entry_len) {
				entry_len = end;
				grown = 1;
			}
		}
	}
	struct tramp_region r = {addr, entry_len, probe, exits, nexits, 0};
	if (!why) {
		int e = add_region(s, &r, code, len, &taken);
		if (e && !is_reason(s, e))
			*err = e;
		if (e)
			why = reason(e);
	}
	if (!why && size && tramp_jumped_into(code, len, addr, addr, addr + taken))
		why = "its code jumps back into its first bytes";
	/* A switch's jump table may send a thread into any instruction:
	 * nothing but the entry is moved in a function with one. */
	for (size_t i = 0; i < nexits && !why && undecided; i++)
		if (exits[i].addr >= addr + taken)
			why =
			    "it jumps through a table or a register, which could land in the bytes "
			    "before a return";
	for (size_t i = 0; i < nexits && !why && !*err; i++) {
		const struct tramp_exit *x = &exits[i];
		uint64_t start = 0;
		size_t wtaken;
		if (x->addr < addr + taken)
			continue; /* moved with the entry, hooked there */
		why = tramp_exit_window(code, len, addr, taken, x, &start);
		if (why)
			break;
		struct tramp_region w = {start, (size_t)(x->addr + x->len - start), -1, x, 1, 1};
		int e =
		    add_region(s, &w, code + (start - addr), len - (size_t)(start - addr), &wtaken);
		if (e && !is_reason(s, e))
			*err = e;
		if (e)
			why = reason(e);
	}
	free(code);
	return why;
}

const char *fast_refusal(pid_t pid, uint64_t addr, uint64_t size, const struct tramp_exit *exits,
			 size_t nexits, size_t undecided)
{
	int err;
	return plan(NULL, pid, addr, size, 0, exits, nexits, undecided, &err);
}

int fast_set_add(struct fast_set *s, uint64_t addr, uint64_t size, int probe,
		 const struct tramp_exit *exits, size_t nexits, size_t undecided)
{
	int err;
	size_t nsites = s->nsites, nhooks = s->nhooks;
	const char *why = plan(s, s->pid, addr, size, probe, exits, nexits, undecided, &err);
	if (why) {
		/* None of the function's sites stays planned. */
		s->nsites = nsites;
		s->nhooks = nhooks;
		return err ? err : -ENOTSUP;
	}
	return 0;
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
		/* With recording off, the trampoline only passes through. */
		w->resume = f->tramp;
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
	s->attached = !err;
	free(e);
	free(g);
	/* The stub's padding is put back; trampoline pages stay. */
	injector_close(&s->inj);
	s->inj_open = 0;
	return err;
}

/* Whether pid is stopped by job control or a tracer, where its watchdog
 * cannot run. */
static int is_stopped(pid_t pid)
{
	char st = procstat_task_state(pid, pid);

	return st == 'T' || st == 't';
}

/* Puts the original bytes back in process pid, every thread stopped:
 * every site's (the traced process, which has them all), or, with
 * only_jumps, those whose bytes are the jump now (a child, whose watchdog
 * may have begun: a site it holds an int3 on is left to it). 0 (also
 * when pid is gone, and its code with it), or code_write()'s -errno. */
static int write_back(struct fast_set *s, pid_t pid, int only_jumps)
{
	struct code_edit *e = calloc(s->nsites ? s->nsites : 1, sizeof(*e));
	struct code_guard *g = calloc(s->nsites ? s->nsites : 1, sizeof(*g));
	size_t n = 0;
	int err = e && g ? 0 : -ENOMEM;

	for (size_t i = 0; i < s->nsites && !err; i++) {
		const struct fast_site *f = &s->sites[i];
		uint8_t now[RECCE_FAST_CODE];
		if (only_jumps && (tmem_read(pid, f->addr, now, f->len) != 0 ||
				   memcmp(now, f->jump, f->len) != 0))
			continue;
		e[n].addr = f->addr;
		e[n].len = f->len;
		memcpy(e[n].old, f->jump, f->len);
		memcpy(e[n].new, f->orig, f->len);
		g[n] = (struct code_guard){f->addr + 1, f->addr + f->len};
		n++;
	}
	struct code_write_stats st = {0};
	size_t stale = 0;
	if (!err && (n || !only_jumps))
		err = code_write(pid, e, n, g, n, 2000, &st, &stale);
	free(e);
	free(g);
	return err == -ESRCH ? 0 : err;
}

/* A child recce waits for at the end: entry k, its process and pidfd. */
struct waited {
	uint32_t k;
	pid_t pid;
	int pidfd;
};

/* Once the trace is over (detach): waits for each child's watchdog to put
 * its bytes back, and puts back itself those of a child stopped, or
 * whose watchdog did not within CHILD_WAIT_MS. The children are found
 * once (traced, alive, mapping the file), then watched by their entry
 * and their pidfd. */
static void end_children(struct fast_set *s)
{
	uint64_t deadline = time_now_ns(CLOCK_MONOTONIC) + CHILD_WAIT_MS * 1000000ull;
	struct waited *v = s->same_ns ? calloc(RECCE_FAST_CHILDREN, sizeof(*v)) : NULL;
	int fds[RECCE_FAST_CHILDREN];
	unsigned char gone[RECCE_FAST_CHILDREN];
	size_t n = 0;

	for (uint32_t k = 0; v && k < RECCE_FAST_CHILDREN; k++) {
		uint64_t w = __atomic_load_n(&s->h->children[k].owner, __ATOMIC_ACQUIRE);
		pid_t pid = RECCE_FAST_OWNER_ID(w);
		int fd;
		if (RECCE_FAST_OWNER_STATE(w) == RECCE_FAST_CHILD_TRACED &&
		    fast_set_find_process(s, pid, &fd) == PROC_FOUND)
			v[n++] = (struct waited){k, pid, fd};
	}
	while (n) {
		int late = time_now_ns(CLOCK_MONOTONIC) >= deadline;
		size_t kept = 0;
		for (size_t i = 0; i < n; i++)
			fds[i] = v[i].pidfd;
		if (evloop_ready_now(fds, n, gone) < 0)
			memset(gone, 0, n);
		for (size_t i = 0; i < n; i++) {
			struct waited *c = &v[i];
			uint64_t *o = &s->h->children[c->k].owner;
			uint64_t w = RECCE_FAST_OWNER(c->pid, RECCE_FAST_CHILD_TRACED);
			if (!gone[i] && __atomic_load_n(o, __ATOMIC_ACQUIRE) == w) {
				if (!late && !is_stopped(c->pid)) {
					v[kept++] = *c;
					continue;
				}
				if (write_back(s, c->pid, 1) != 0)
					s->children_left++;
				__atomic_compare_exchange_n(
				    o, &w, RECCE_FAST_OWNER(c->pid, RECCE_FAST_CHILD_DONE), 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			}
			close(c->pidfd);
		}
		n = kept;
		if (n) {
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
		}
	}
	free(v);
}

int fast_set_remove_all(struct fast_set *s)
{
	if (!s || !s->h)
		return 0;
	__atomic_store_n(&s->h->enabled, 0, __ATOMIC_RELAXED);
	if (!s->attached)
		return 0;
	int err = write_back(s, s->pid, 0);
	if (!err) {
		s->attached = 0;
		/* The watchdog leaves; were recce to die before this, it
		 * would find the bytes put back and leave them. The
		 * children's put theirs back. */
		__atomic_store_n(&s->h->detach, 1, __ATOMIC_RELEASE);
		end_children(s);
	}
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
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pidfd >= 0)
			close(s->procs[i].pidfd);
	free(s->procs);
	target_unlock(s->lock_fd);
	free(s->sites);
	free(s->hooks);
	free(s->evs);
	free(s->stacks);
	free(s);
}
