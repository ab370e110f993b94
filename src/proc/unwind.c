/*
 * The DWARF unwinder (see unwind.h): libdwfl's frame unwinder over the
 * registers and stack copy of one perf sample, with the target's modules
 * reported from the process registry.
 *
 * A fast path comes first: frames whose rules are in the common form
 * (cfi-rules.h) are stepped with cached rules, rsp, rbp and rip only; so
 * are signal frames (a restorer's code is known by its bytes) and Go
 * code without CFI (by the stack offsets of Go's own table). A sample
 * that meets any other frame is unwound again, whole, by libdwfl, so
 * the two agree. They differ in one place on purpose: where the return
 * address lies past the copied stack, the fast path ends the stack, while
 * libdwfl goes on to guess the next frame from rbp as a frame pointer.
 * Check mode runs both on every sample and counts the stacks that differ.
 *
 * The rules are cached by file and address in it, for every process that
 * maps the file, and a process gets a Dwfl of its own only when one of
 * its rules is not known yet or libdwfl must unwind one of its samples:
 * new processes of programs already seen (a shell loop, a build) cost no
 * Dwfl, no ELF opened, mapped and unmapped again.
 */
#include "proc/unwind.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/cfi-rules.h"
#include "proc/mem-read.h"
#include "proc/proc-maps.h"
#include "symbols/gopclntab.h"
#include "symbols/sym-file.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/path.h"
#include "util/u64map.h"

/* Processes whose Dwfl is kept; the least recently used one goes first. */
#define MAX_PROCS 64
/* Modules reported per process beyond which nothing more is added. */
#define MAX_MODULES 4096
/* A shared rule's key: a file's number above the address in the file. */
#define VADDR_BITS 40
#define FILE_IDS   (1u << 23)
/* plausible_return()'s answers kept, beyond which they are dropped. */
#define MAX_RETURNS (1u << 16)
/* A read this far past the stack pointer or more is not the next frame's
 * (a garbage CFA): it says nothing of the copy a stack wants. */
#define PAST_COPY_MAX (1u << 20)

/* The callers past a frame-pointer chain's end read from the thread's
 * memory (fp_chain_tail()): threads kept, frames kept each, and how far
 * past the copy the chain's last return address is looked for. */
#define TAILS	    64
#define TAIL_FRAMES 6
#define TAIL_SCAN   (256u << 10)

/* DWARF register numbers of x86-64 and where each sits in a sample's
 * registers (PERF_EVENTS_REGS_MASK order: AX BX CX DX SI DI BP SP IP
 * R8..R15). DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
static const unsigned char dwarf_from_perf[17] = {
    0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8,
};
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8
/* Where a signal's ucontext holds a register: its mcontext starts 40
 * bytes in, with r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip. */
#define UC_GREG(i) (40 + 8 * (i))
#define REG_BP_AT  10
#define REG_SP_AT  15
#define REG_IP_AT  16

struct reported {
	const struct sym_file *file;
	uint64_t bias;
	uint64_t start, end; /* the mapping that made us report it */
};

struct proc_unwind {
	pid_t pid; /* 0 = free slot */
	Dwfl *dwfl;
	int attached; /* dwfl_attach_state done */
	int dirty;    /* mappings changed since the modules were reported */
	int broken;   /* could not report any module: unwind only the IP */
	struct reported *mods;
	size_t nmods, mods_cap;
	struct cfi_rules *rules; /* the fast path's, for these modules */
	uint64_t used;		 /* LRU clock */
};

/* The sample being unwound: what the Dwfl callbacks read. */
struct unwind_ctx {
	pid_t pid, tid;
	const uint64_t *regs;
	const uint8_t *stack;
	size_t stack_len;
	uint64_t sp;
	uint64_t *frames;
	size_t n, max;
	int ended;	  /* the walk reached the outermost frame */
	int ran_out;	  /* a read fell past the copy: the walk may have ended there */
	uint32_t holes;	  /* pages of the copy not read (unwind_sample's) */
	int in_hole;	  /* ... and a read fell in one of them */
	uint64_t wanted;  /* the bytes past sp the reads past the copy asked for */
	int switched;	  /* a signal frame led to another stack than the copy's */
	int by_dwfl;	  /* libdwfl made the walk, without Go's table */
	int after_signal; /* libdwfl's next frame is the one a signal interrupted */
	int leaf_signal;  /* the fast path found the leaf in a restorer */
	int popped;	  /* ... rbp restored by an epilogue's pop */
	int stub;	  /* ... the leaf in a stub without CFI */
	/* The frame a signal interrupted, the join_frame-th, its rbp join_bp;
	 * join_ok when that rbp is its own frame pointer and its stack is
	 * not in the copy: where the kernel's frame-pointer walk goes on. */
	uint64_t join_bp;
	size_t join_frame;
	int join_ok;
	int no_fp; /* the frame-pointer walk may not go on from the last frame */
};

struct unwinder {
	struct proc_registry *procs;
	struct proc_unwind procs_cache[MAX_PROCS];
	uint64_t clock;
	struct unwind_ctx cur;
	int vdso_fd; /* memfd holding this kernel's vDSO image, -2 = not tried */
	/* recce's own executable, which gives every process's Dwfl its
	 * machine (see proc_get): -1 and NULL when it could not be read. */
	int self_fd;
	Elf *self_elf;
	uint64_t vdso_vaddr;
	/* Rules by file and address in it, shared by every process that
	 * maps the file: a new process of a known program unwinds without a
	 * Dwfl of its own (ids: sym_file -> a number below FILE_IDS). */
	struct cfi_rules *shared;
	struct u64map file_ids;
	uint64_t nfile_ids;
	/* plausible_return()'s answers for files' code, by file number
	 * above the offset in the file: 1 + the answer. */
	struct u64map returns;
	int check;			/* run both unwinders on every sample */
	uint64_t checked, differ, fast; /* samples compared, stacks that differ, fast ones */
	enum unwind_end end;		/* why the last unwinder_unwind() stopped */
	uint32_t holes;			/* the holes of the copy unwinder_sample() unwinds */
	uint64_t ends[UNWIND_END_KINDS]; /* stacks marked, by why */
	/* fp_chain_tail()'s answers, by thread and return address: where
	 * that address lies in the thread's stack (0: not found, or its
	 * callers could not be read) and the callers there. */
	struct fp_tail {
		pid_t pid, tid;
		uint64_t ra, slot, slot0; /* slot0: where frames[0] lies */
		uint64_t frames[TAIL_FRAMES];
		size_t n;
	} tails[TAILS];
	uint64_t copy_wanted;		 /* the most a stack marked [stack copy ended] wanted */
};

/* The CFI of a module comes from its own file: .eh_frame, or .debug_frame
 * where the file carries it (Go). A separate debug file is never opened:
 * libdw decompresses all of its DWARF on opening it, for each new process
 * (the continuous agent spent half of its time so beside short-lived
 * processes: Debian's ld.so has no CFI for _start, and libc6-dbg's file
 * for it none either), and such files keep no CFI .eh_frame lacks. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct unwinder *unwinder_new(struct proc_registry *procs, int check)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->procs = procs;
	u->vdso_fd = -2;
	u->check = check;
	u->shared = cfi_rules_new();
	u64map_init(&u->file_ids);
	u64map_init(&u->returns);
	u->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (u->self_fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
		u->self_elf = elf_begin(u->self_fd, ELF_C_READ_MMAP, NULL);
	return u;
}

void unwinder_check_stats(const struct unwinder *u, struct unwind_check_stats *st)
{
	st->checked = u ? u->checked : 0;
	st->fast = u ? u->fast : 0;
	st->differ = u ? u->differ : 0;
}

static void proc_release(struct proc_unwind *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p->mods);
	cfi_rules_free(p->rules);
	memset(p, 0, sizeof(*p));
}

void unwinder_files_closed(struct unwinder *u)
{
	for (size_t i = 0; i < MAX_PROCS; i++)
		proc_release(&u->procs_cache[i]);
	if (u->shared)
		cfi_rules_clear(u->shared);
	u64map_release(&u->file_ids);
	u64map_init(&u->file_ids);
	u->nfile_ids = 0;
	u64map_release(&u->returns);
	u64map_init(&u->returns);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < MAX_PROCS; i++)
		proc_release(&u->procs_cache[i]);
	cfi_rules_free(u->shared);
	u64map_release(&u->file_ids);
	u64map_release(&u->returns);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	if (u->self_elf)
		elf_end(u->self_elf);
	if (u->self_fd >= 0)
		close(u->self_fd);
	free(u);
}

static struct proc_unwind *proc_find(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < MAX_PROCS; i++)
		if (u->procs_cache[i].pid == pid)
			return &u->procs_cache[i];
	return NULL;
}

void unwinder_maps_changed(struct unwinder *u, pid_t pid)
{
	struct proc_unwind *p = proc_find(u, pid);

	if (p)
		p->dirty = 1;
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	struct proc_unwind *p = proc_find(u, pid);

	if (p)
		proc_release(p);
}

/*
 * A copy of recce's own vDSO in a memfd: the vDSO is one image per kernel,
 * identical in every process, and libdwfl wants a file to read its CFI from.
 */
static int vdso_file(struct unwinder *u)
{
	if (u->vdso_fd != -2)
		return u->vdso_fd;
	u->vdso_fd = -1;
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -1;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > 64)
		return -1;
	/* The image spans its loadable segment; section headers follow it. */
	uint64_t size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	int have_vaddr = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
		if (!have_vaddr && ph->p_offset == 0) {
			u->vdso_vaddr = ph->p_vaddr;
			have_vaddr = 1;
		}
	}
	if (!have_vaddr || size > (1u << 20))
		return -1;
	int fd = memfd_create("recce-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, base, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	u->vdso_fd = fd;
	return fd;
}

/* 1 if f is reported at this bias, -1 if another module covers part of
 * [start, end) (the layout changed), else 0. */
static int proc_has_module(const struct proc_unwind *p, const struct sym_file *f, uint64_t bias,
			   uint64_t start, uint64_t end)
{
	int overlap = 0;

	for (size_t i = 0; i < p->nmods; i++) {
		const struct reported *r = &p->mods[i];
		if (r->file == f && r->bias == bias)
			return 1;
		if (r->start < end && start < r->end)
			overlap = 1;
	}
	return overlap ? -1 : 0;
}

static int proc_add_module(struct proc_unwind *p, const struct sym_file *f, uint64_t bias,
			   uint64_t start, uint64_t end)
{
	struct reported *n = array_reserve(p->mods, &p->mods_cap, p->nmods + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->mods = n;
	p->mods[p->nmods].file = f;
	p->mods[p->nmods].bias = bias;
	p->mods[p->nmods].start = start;
	p->mods[p->nmods].end = end;
	p->nmods++;
	return 0;
}

/* The load bias of map: runtime address minus ELF virtual address. */
static int map_bias(struct unwinder *u, const struct proc_map *m, int *fd, const char **path,
		    uint64_t *bias)
{
	uint64_t vaddr, len = m->end - m->start;

	if (m->file && sym_file_fd(m->file) >= 0 &&
	    sym_file_map_vaddr(m->file, m->pgoff, len, m->prot & PROT_EXEC, &vaddr) == 0) {
		*fd = sym_file_fd(m->file);
		*path = sym_file_path(m->file);
		*bias = m->start - vaddr;
		return 0;
	}
	if (m->path && strcmp(m->path, "[vdso]") == 0 && vdso_file(u) >= 0) {
		*fd = u->vdso_fd;
		*path = "[vdso]";
		*bias = m->start - u->vdso_vaddr;
		return 0;
	}
	return -ENOENT;
}

/* Whether the file at fd is an executable linked at fixed addresses
 * (ET_EXEC). libdwfl puts such a file at those addresses whatever bias it
 * is given: a second mapping of it (node's V8 maps its builtins' code
 * again, near its JIT code) reported too takes the place of the first,
 * and the process is left without its executable's CFI. */
static int fixed_executable(int fd)
{
	unsigned char e[EI_NIDENT + 2];

	return pread(fd, e, sizeof(e), 0) == (ssize_t)sizeof(e) &&
	       memcmp(e, ELFMAG, SELFMAG) == 0 && e[EI_DATA] == ELFDATA2LSB &&
	       (e[EI_NIDENT] | e[EI_NIDENT + 1] << 8) == ET_EXEC;
}

/* How many modules dwfl holds. */
static int count_module(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr start,
			void *arg)
{
	(void)mod, (void)user, (void)name, (void)start;
	++*(size_t *)arg;
	return DWARF_CB_OK;
}

static size_t modules_of(Dwfl *dwfl)
{
	size_t n = 0;

	dwfl_getmodules(dwfl, count_module, &n, 0);
	return n;
}

/*
 * Reports the modules of p's mappings that are not reported yet. Returns
 * the number added, or -1 when a mapping moved or was replaced (the caller
 * then starts over with a fresh Dwfl).
 */
static int proc_report(struct unwinder *u, struct proc_unwind *p)
{
	const struct proc_map *maps;
	size_t n = procs_maps(u->procs, p->pid, &maps);
	int added = 0;

	dwfl_report_begin_add(p->dwfl);
	for (size_t i = 0; i < n && p->nmods < MAX_MODULES; i++) {
		const struct proc_map *m = &maps[i];
		int fd;
		const char *path;
		uint64_t bias;
		if (map_bias(u, m, &fd, &path, &bias) < 0)
			continue;
		/* Key vDSO modules by a null file: the memfd is ours. */
		const struct sym_file *key = m->file && sym_file_fd(m->file) >= 0 ? m->file : NULL;
		int has = proc_has_module(p, key, bias, m->start, m->end);
		if (has > 0)
			continue;
		if (has < 0) {
			dwfl_report_end(p->dwfl, NULL, NULL);
			return -1;
		}
		/* An executable's own load is at bias 0; another mapping of
		 * it is code it copied, unwound as code in no file. */
		if (bias && key && fixed_executable(fd))
			continue;
		int dupfd = dup(fd);
		if (dupfd < 0)
			continue;
		Dwfl_Module *mod =
		    dwfl_report_elf(p->dwfl, path_base(path), path, dupfd, bias, false);
		if (!mod) {
			close(dupfd);
			continue;
		}
		if (proc_add_module(p, key, bias, m->start, m->end) < 0)
			break;
		added++;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	/* libdwfl drops a module it already had when a file is reported
	 * over it (another descriptor for the same name and range, as when
	 * a program maps a file again): the layout changed under us. Each
	 * module p lists is one libdwfl took. */
	if (modules_of(p->dwfl) < p->nmods)
		return -1;
	return added;
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->cur.tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	*thread_argp = u;
	return tid == u->cur.tid;
}

/* Whether the word at addr, in the copy, lies in a page of it not read. */
static bool in_hole(const struct unwind_ctx *c, uint64_t addr)
{
	uint64_t first = ((addr & ~4095ull) - (c->sp & ~4095ull)) / 4096;
	uint64_t last = (((addr + 7) & ~4095ull) - (c->sp & ~4095ull)) / 4096;

	return c->holes &&
	       ((first < 32 && (c->holes >> first) & 1) || (last < 32 && (c->holes >> last) & 1));
}

/* A read of the word at addr fell past the copy: the walk may end
 * there, and a copy of the stack to that word would have gone on. */
static void past_copy(struct unwind_ctx *c, uint64_t addr)
{
	c->ran_out = 1;
	if (addr >= c->sp && addr - c->sp < c->stack_len && in_hole(c, addr)) {
		c->in_hole = 1; /* in the copy, in a page not read */
		return;
	}
	if (addr >= c->sp && addr - c->sp < PAST_COPY_MAX && addr - c->sp + 8 > c->wanted)
		c->wanted = addr - c->sp + 8;
}

/* A word of the sample's stack copy, if addr is in it (and not in a
 * page of it not read). */
static bool copy_read(const struct unwind_ctx *c, uint64_t addr, uint64_t *out)
{
	if (addr >= c->sp && addr - c->sp <= c->stack_len && c->stack_len - (addr - c->sp) >= 8 &&
	    !in_hole(c, addr)) {
		memcpy(out, c->stack + (addr - c->sp), sizeof(*out));
		return true;
	}
	return false;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	struct unwind_ctx *c = &u->cur;
	uint64_t word;

	if (copy_read(c, addr, &word)) {
		*result = word;
		return true;
	}
	/* Outside the copied stack: read the mapped file, if any. */
	const struct proc_map *m = procs_find(u->procs, c->pid, addr);
	if (!m || !m->file || sym_file_fd(m->file) < 0 || m->end - addr < 8) {
		/* libdwfl takes a return address it cannot read for the
		 * stack's end: remember that it was not. */
		past_copy(c, addr);
		return false;
	}
	uint64_t off = addr - m->start + m->pgoff;
	return pread(sym_file_fd(m->file), result, sizeof(*result), (off_t)off) ==
	       (ssize_t)sizeof(*result);
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Word dregs[17];

	for (size_t i = 0; i < 17; i++)
		dregs[i] = u->cur.regs[dwarf_from_perf[i]];
	return dwfl_thread_state_registers(thread, 0, 17, dregs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = cb_next_thread,
    .get_thread = cb_get_thread,
    .memory_read = cb_memory_read,
    .set_initial_registers = cb_set_initial_registers,
};

/* The state of pid, up to date; NULL if it cannot be unwound. Its Dwfl
 * is made on first need (proc_dwfl). */
static struct proc_unwind *proc_get(struct unwinder *u, pid_t pid)
{
	struct proc_unwind *p = proc_find(u, pid);

	if (p && p->dirty && !p->broken) {
		p->dirty = 0;
		int added = p->dwfl ? proc_report(u, p) : 0;
		if (added < 0)
			proc_release(p); /* the layout changed: start over */
		else if (added > 0)
			cfi_rules_clear(p->rules); /* "no module" may have changed */
	}
	p = proc_find(u, pid);
	if (p) {
		p->used = ++u->clock;
		return p->broken ? NULL : p;
	}

	/* A new process: take a free slot or the least recently used. */
	p = &u->procs_cache[0];
	for (size_t i = 0; i < MAX_PROCS; i++) {
		struct proc_unwind *c = &u->procs_cache[i];
		if (!c->pid) {
			p = c;
			break;
		}
		if (c->used < p->used)
			p = c;
	}
	proc_release(p);
	p->pid = pid;
	p->used = ++u->clock;
	p->rules = cfi_rules_new(); /* without it, every sample goes to libdwfl */
	return p;
}

/* p's Dwfl with its modules reported, made on first need; NULL when it
 * cannot be (p is then unwound by its IP alone until its mappings
 * change). */
static Dwfl *proc_dwfl(struct unwinder *u, struct proc_unwind *p)
{
	if (p->dwfl || p->broken)
		return p->dwfl;
	p->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!p->dwfl || proc_report(u, p) <= 0 ||
	    /* The machine from recce's own executable, not from one of the
	     * process's modules: libdwfl would borrow that module's backend,
	     * and free it with the module when a file is reported over it,
	     * leaving the process state pointing at freed memory. */
	    !dwfl_attach_state(p->dwfl, u->self_elf, p->pid, &thread_callbacks, u)) {
		/* No module to unwind with (yet): remember, and try again
		 * when a mapping appears. */
		if (p->dwfl)
			dwfl_end(p->dwfl);
		p->dwfl = NULL;
		p->nmods = 0;
		p->broken = 1;
		return NULL;
	}
	p->attached = 1;
	return p->dwfl;
}

/* The number under which file's rules are shared, or 0 when none can be
 * given (more files than FILE_IDS, no memory). */
static uint64_t file_id(struct unwinder *u, const struct sym_file *file)
{
	uint64_t id;

	if (u64map_get(&u->file_ids, (uintptr_t)file, &id))
		return id;
	if (u->nfile_ids + 1 >= FILE_IDS ||
	    u64map_put(&u->file_ids, (uintptr_t)file, u->nfile_ids + 1) < 0)
		return 0;
	return ++u->nfile_ids;
}

/* rt_sigreturn as a signal's restorer makes it (glibc's __restore_rt,
 * Go's runtime.sigreturn): mov $15, %rax; syscall. */
static const uint8_t sigreturn_code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

/* Whether the code at addr, in m's file (open at fd), is a restorer. */
static int restorer_at(const struct proc_map *m, int fd, uint64_t addr)
{
	uint8_t b[sizeof(sigreturn_code)];

	if (addr < m->start || m->end - addr < sizeof(b))
		return 0;
	return pread(fd, b, sizeof(b), (off_t)(m->pgoff + (addr - m->start))) ==
		   (ssize_t)sizeof(b) &&
	       memcmp(b, sigreturn_code, sizeof(b)) == 0;
}

/* The rule of Go's own table at vaddr, when the code there is a Go
 * function's: its enum gopclntab_step, or -ENOENT. Taken where the file
 * has no CFI (a stripped Go program: Go writes its CFI into .debug_frame,
 * which -ldflags=-w drops), and for the runtime's functions that switch
 * stacks even where it has (their CFI follows the old SP): those are
 * left without a rule, the walk ending there (time.now, which calls the
 * vDSO on the thread's stack, for one). */
static int go_rule(const struct proc_map *m, uint64_t vaddr, struct cfi_rule *r)
{
	int64_t sp;
	int kind = sym_table_go_step(m->file, vaddr, &sp);

	if (kind < 0)
		return kind;
	memset(r, 0, sizeof(*r));
	r->go = r->go_code = 1;
	if (kind == GOPCLNTAB_SWITCH) {
		r->ra_how = CFI_NONE;
		return kind;
	}
	if (kind == GOPCLNTAB_OUTERMOST) {
		r->ra_how = CFI_UNDEFINED;
		return kind;
	}
	r->cfa_reg = CFI_REG_SP;
	r->cfa_off = (int32_t)sp + 8;
	r->ra_how = CFI_SAVED_AT;
	r->ra_off = -8;
	/* Where Go saved rbp is not in the table: no later step needs it. */
	r->bp_how = sp ? CFI_UNDEFINED : CFI_SAME;
	r->ra_exact = kind == GOPCLNTAB_INJECTED;
	return kind;
}

/* The rule at pc in p: shared by file and address when pc is in a file
 * (the symbolizer's sym_file lives as long as the unwinder, one per
 * file), else p's own (the vDSO). Computing it needs p's Dwfl. */
static int rule_at(struct unwinder *u, struct proc_unwind *p, uint64_t pc, struct cfi_rule *r)
{
	const struct proc_map *m = procs_find(u->procs, p->pid, pc);
	uint64_t bias, id, key = 0;
	const char *path;
	int fd;

	if (u->shared && m && m->file && sym_file_fd(m->file) >= 0 &&
	    map_bias(u, m, &fd, &path, &bias) == 0 && pc - bias < (1ull << VADDR_BITS) &&
	    (id = file_id(u, m->file)) != 0)
		key = id << VADDR_BITS | (pc - bias);
	if (key) {
		int got = cfi_rules_find(u->shared, key, r);
		if (got >= 0)
			return got;
	}
	Dwfl *dwfl = proc_dwfl(u, p);
	if (!dwfl)
		return 0;
	if (!key)
		return cfi_rules_get(p->rules, dwfl, pc, r);
	int simple;
	if (restorer_at(m, fd, pc + 1) || restorer_at(m, fd, pc) || restorer_at(m, fd, pc - 7) ||
	    restorer_at(m, fd, pc - 9)) {
		/* A return address minus one before a restorer, or a leaf
		 * in one (at its mov, at its syscall, or in the kernel's
		 * rt_sigreturn): the frame the kernel built to run a signal
		 * handler, at SP. No other pc is so placed: a call never
		 * returns into a restorer, and the byte before it is never
		 * run. */
		memset(r, 0, sizeof(*r));
		r->ra_how = CFI_SIGNAL;
		simple = 1;
	} else {
		simple = cfi_rules_compute(dwfl, pc, r);
		if (simple < 0)
			return 0; /* no module at pc in this Dwfl: nothing to keep */
		struct cfi_rule g;
		int kind = go_rule(m, pc - bias, &g);
		if (kind == GOPCLNTAB_SWITCH || (kind >= 0 && simple && r->ra_how == CFI_NONE)) {
			*r = g;
			simple = 1;
		} else if (kind >= 0) {
			r->go_code = 1;
		}
	}
	if (cfi_rules_put(u->shared, key, simple, r) < 0)
		return -ENOMEM;
	return simple;
}

static int cb_frame(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	struct unwind_ctx *c = &u->cur;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A zero return address ends the stack (_start, clone). */
	if (!pc && c->n) {
		c->ended = 1;
		return DWARF_CB_ABORT;
	}
	/* Below a signal frame, as the fast path keeps them: the restorer
	 * (an activation to libdwfl) and the interrupted code one byte on. */
	if (c->after_signal) {
		pc++;
		c->after_signal = 0;
		/* The interrupted frame's stack (DWARF register 7, rsp): a
		 * handler run on a signal stack of its own left it out of the
		 * copy, which then ends where that stack does, not this one. */
		Dwarf_Word sp;
		if (dwfl_frame_reg(state, 7, &sp) == 0 &&
		    (sp < c->sp || sp - c->sp >= c->stack_len))
			c->switched = 1;
	} else if (activation && c->n) {
		pc++;
		c->after_signal = 1;
	}
	c->frames[c->n++] = pc;
	return c->n < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* A word of the sample's stack: 1 when read from the copy, 0 when the
 * address is in no file (past the copy's end: the stack ends there), -1
 * when libdwfl would read it from a file. */
static int stack_read(struct unwinder *u, uint64_t addr, uint64_t *out)
{
	struct unwind_ctx *c = &u->cur;

	if (copy_read(c, addr, out))
		return 1;
	const struct proc_map *m = procs_find(u->procs, c->pid, addr);
	if (m && m->file)
		return -1;
	past_copy(c, addr);
	return 0;
}

/* The bytes of pid's file-backed code at [addr, addr + len): 0, or -1. */
static int file_code(struct unwinder *u, pid_t pid, uint64_t addr, uint8_t *out, size_t len)
{
	const struct proc_map *m = procs_find(u->procs, pid, addr);

	if (!m || !m->file || sym_file_fd(m->file) < 0 || !(m->prot & PROT_EXEC) ||
	    m->end - addr < len)
		return -1;
	return pread(sym_file_fd(m->file), out, len, (off_t)(m->pgoff + (addr - m->start))) ==
		       (ssize_t)len
		   ? 0
		   : -1;
}

/* Whether ra, in pid's file-backed code, returns past a call: call
 * rel32, or through memory or a register (ff /2) of 2 to 7 bytes. */
static int follows_call(struct unwinder *u, pid_t pid, uint64_t ra)
{
	uint8_t c[7];

	/* The file's bytes (a breakpoint may be in memory), else memory's. */
	if (file_code(u, pid, ra - 7, c, sizeof(c)) < 0 &&
	    proc_mem_read_all(pid, ra - 7, c, sizeof(c)) < 0)
		return 0;
	int call = c[2] == 0xe8;
	for (int len = 2; len <= 7 && !call; len++)
		call = c[7 - len] == 0xff && ((c[8 - len] >> 3) & 7) == 2;
	return call;
}

/* Whether the leaf's code at pc has not touched the stack, and ra, the
 * word at the stack's top, returns past a call: then the stack is as at
 * a function's entry, its caller at ra. So is a stub (an endbr64, a
 * jump: a thunk's, a PLT entry's, for which LLD writes no CFI), and a
 * system call's wrapper without CFI whose thread is in the call (glibc's
 * clone3 ends its CFI before its syscall, for the child's sake: the
 * parent's IP is past the syscall, its caller's return on top). */
static int stub_at(struct unwinder *u, pid_t pid, uint64_t pc, uint64_t ra)
{
	uint8_t b[4], sc[2];

	if (file_code(u, pid, pc, b, sizeof(b)) < 0)
		return 0;
	int stub =
	    (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) || b[0] == 0xe9 ||
	    b[0] == 0xeb || (b[0] == 0xff && b[1] == 0x25) ||
	    (b[0] == 0xf2 && b[1] == 0xff && b[2] == 0x25) ||
	    (file_code(u, pid, pc - 2, sc, sizeof(sc)) == 0 && sc[0] == 0x0f && sc[1] == 0x05);
	return stub && follows_call(u, pid, ra);
}

/* Whether pc is in Go code, whose goroutines return into runtime.goexit
 * past a NOP, not a call. */
static int go_code_at(struct unwinder *u, struct proc_unwind *p, uint64_t pc)
{
	struct cfi_rule r;

	return p && rule_at(u, p, pc, &r) > 0 && (r.go || r.go_code);
}

/* Whether ra, read by the kernel's frame-pointer walk, can be a return
 * address: in code of the process, and in a file's code past a call (or
 * at a signal's restorer, or in Go code). The answer for a file's code
 * depends on the file only, and is kept: a deep stack past the copy
 * asks again for every frame of every sample. */
static int plausible_return(struct unwinder *u, struct proc_unwind *p, pid_t pid, uint64_t ra)
{
	const struct proc_map *m = procs_find(u->procs, pid, ra - 1);

	if (!m)
		return 0;
	if (!m->file)
		return 1; /* JIT code: nothing to check it by */
	uint64_t off = m->pgoff + (ra - m->start), id = 0, kept;
	if (sym_file_fd(m->file) >= 0 && off < (1ull << VADDR_BITS))
		id = file_id(u, m->file);
	uint64_t key = id << VADDR_BITS | off;
	if (id && u64map_get(&u->returns, key, &kept))
		return (int)kept - 1;
	int yes = follows_call(u, pid, ra) || go_code_at(u, p, ra - 1) ||
		  restorer_at(m, sym_file_fd(m->file), ra);
	if (id) {
		if (u64map_count(&u->returns) >= MAX_RETURNS) {
			u64map_release(&u->returns);
			u64map_init(&u->returns);
		}
		(void)u64map_put(&u->returns, key, 1 + (uint64_t)yes);
	}
	return yes;
}

/* The fast path: the count of frames, or 0 when libdwfl must do it. */
static size_t fast_unwind(struct unwinder *u, struct proc_unwind *p)
{
	struct unwind_ctx *c = &u->cur;
	uint64_t sp = c->regs[REG_SP], bp = c->regs[REG_BP], look = c->regs[REG_IP];
	int bp_known = 1, interrupted = 0;
	size_t n = 0;

	if (!p->rules)
		return 0;
	c->frames[n++] = look;
	while (n < c->max) {
		struct cfi_rule r;
		if (rule_at(u, p, look, &r) <= 0)
			return 0;
		if (r.ra_how == CFI_SIGNAL) {
			/* The interrupted registers: rbp, rsp and rip of the
			 * ucontext's mcontext. Its stack may be another than the
			 * copy's (a Go goroutine's, below a handler run on the
			 * thread's signal stack). */
			uint64_t ip;
			if (!copy_read(c, sp + UC_GREG(REG_BP_AT), &bp) ||
			    !copy_read(c, sp + UC_GREG(REG_IP_AT), &ip) ||
			    !copy_read(c, sp + UC_GREG(REG_SP_AT), &sp) || !ip)
				return 0;
			bp_known = 1;
			if (sp < c->sp || sp - c->sp >= c->stack_len)
				c->switched = 1;
			if (n == 1)
				c->leaf_signal = 1;
			/* A caller's frame is named at its address minus one,
			 * where a call would be: the restorer and the
			 * interrupted code are kept one byte on, so that they
			 * are named where they are (Go's sigreturn has no byte
			 * before it of its own, as glibc's has). */
			if (n > 1)
				c->frames[n - 1]++;
			c->frames[n++] = ip + 1;
			look = ip; /* where it was, not a return address */
			c->join_bp = bp;
			c->join_frame = n;
			c->join_ok = 0;
			interrupted = 1;
			continue;
		}
		if (r.ra_how == CFI_NONE && r.go) {
			/* A Go stack switch (time.now calls the vDSO on the
			 * thread's stack): the walk ends there, for the
			 * kernel's frame-pointer walk to go on from, but not
			 * from a leaf, whose rbp may still be its caller's
			 * (the frame pointers would skip that caller). */
			c->no_fp = n == 1;
			break;
		}
		uint64_t top;
		if (r.ra_how == CFI_NONE && n == 1 && copy_read(c, sp, &top) &&
		    stub_at(u, c->pid, look, top)) {
			memset(&r, 0, sizeof(r));
			r.cfa_reg = CFI_REG_SP;
			r.cfa_off = 8;
			r.ra_how = CFI_SAVED_AT;
			r.ra_off = -8;
			r.bp_how = CFI_SAME;
			c->stub = 1;
		}
		if (r.ra_how == CFI_NONE) {
			/* Code without CFI (Debian's ld.so _start, every new
			 * process's first frame): libdwfl would go on by the
			 * frame pointer, which a zero rbp ends. */
			if (!bp_known || bp != 0)
				return 0;
			c->ended = 1;
			break;
		}
		if (r.ra_how == CFI_UNDEFINED) {
			c->ended = 1; /* the outermost frame */
			break;
		}
		if (r.cfa_reg == CFI_REG_BP && !bp_known)
			return 0;
		uint64_t cfa = (r.cfa_reg == CFI_REG_SP ? sp : bp) + (uint64_t)(int64_t)r.cfa_off;
		/* Whether the interrupted frame's rbp is its own frame
		 * pointer: the slot below its return address, where its CFI
		 * (or Go's convention, for a frame that has one) saves the
		 * caller's rbp. In a prologue or an epilogue it is not. */
		if (interrupted)
			c->join_ok = c->switched && bp == cfa - 16 && r.ra_off == -8 &&
				     ((r.bp_how == CFI_SAVED_AT && r.bp_off == -16) ||
				      (r.go_code && r.cfa_reg == CFI_REG_SP && r.cfa_off >= 16));
		interrupted = 0;
		uint64_t ra;
		int rd = stack_read(u, cfa + (uint64_t)(int64_t)r.ra_off, &ra);
		if (rd == 0)
			break;
		if (rd < 0)
			return 0;
		uint64_t bp_at = cfa + (uint64_t)(int64_t)r.bp_off;
		if (r.bp_how == CFI_SAVED_AT && bp_at < sp) {
			/* A slot below the stack pointer was popped: in an
			 * epilogue, whose CFI (as GCC writes it) still says where
			 * rbp was saved, rbp holds the caller's value again.
			 * The copy begins at the stack pointer; libdwfl, which
			 * reads the slot, stops there. */
			c->popped = 1;
		} else if (r.bp_how == CFI_SAVED_AT) {
			rd = stack_read(u, bp_at, &bp);
			if (rd < 0)
				return 0;
			bp_known = rd > 0;
		} else if (r.bp_how == CFI_UNDEFINED) {
			bp_known = 0;
		}
		sp = cfa;
		/* A zero return address ends the stack (_start, clone). */
		if (!ra) {
			c->ended = 1;
			break;
		}
		c->frames[n++] = r.ra_exact ? ra + 1 : ra;
		look = r.ra_exact ? ra : ra - 1;
	}
	return n;
}

/* The general path: libdwfl over the whole sample. */
static size_t dwfl_unwind(struct unwinder *u, struct proc_unwind *p)
{
	u->cur.n = 0;
	u->cur.ended = u->cur.ran_out = u->cur.switched = u->cur.after_signal = 0;
	u->cur.join_ok = u->cur.no_fp = 0;
	u->cur.by_dwfl = 1;
	if (!proc_dwfl(u, p))
		return 0;
	/* 0: libdwfl found no caller of the last frame, the stack's end. */
	if (dwfl_getthread_frames(p->dwfl, u->cur.tid, cb_frame, u) == 0)
		u->cur.ended = 1;
	return u->cur.n;
}

/* In check mode: both paths, compared. */
static size_t checked_unwind(struct unwinder *u, struct proc_unwind *p)
{
	struct unwind_ctx *c = &u->cur;
	uint64_t *fast = malloc(c->max * sizeof(*fast)), *frames = c->frames;
	size_t nfast = 0;

	if (fast) {
		c->frames = fast;
		nfast = fast_unwind(u, p);
		c->frames = frames;
	}
	int not_compared = c->leaf_signal || c->popped || c->stub;
	size_t n = dwfl_unwind(u, p);
	u->checked++;
	if (nfast) {
		u->fast++;
		/* A leaf past a restorer's syscall (in the kernel's
		 * rt_sigreturn) lies past the restorer's CFI: libdwfl guesses
		 * by rbp there and loses the interrupted function, which the
		 * fast path reads from the signal frame; in an epilogue past
		 * the pop of rbp, libdwfl reads the popped slot, not in the
		 * copy, and stops; in a stub without CFI it has no rule.
		 * Not compared. */
		if (!not_compared && (nfast != n || memcmp(fast, frames, n * sizeof(*frames)) != 0))
			u->differ++;
	}
	free(fast);
	return n;
}

/* The CFI rule at the walk's last frame: 1, or 0 where there is none. */
static int last_rule(struct unwinder *u, struct proc_unwind *p, struct cfi_rule *r)
{
	struct unwind_ctx *c = &u->cur;

	if (!p || !c->n)
		return 0;
	uint64_t pc = c->frames[c->n - 1];
	return rule_at(u, p, c->n == 1 ? pc : pc - 1, r) > 0;
}

/* Whether the walk's last frame is in code its file has no CFI for (a
 * stub of hand-written assembly, say): there the walk could only guess by
 * the frame pointer, whatever its last read was, and stopped. So is Go
 * code for libdwfl, which does not read Go's table. */
static int ends_without_cfi(struct unwinder *u, struct proc_unwind *p)
{
	struct cfi_rule r;

	return last_rule(u, p, &r) && (r.ra_how == CFI_NONE || (r.go && u->cur.by_dwfl));
}

/* Whether the walk's last frame is the outermost, its CFI saying it has
 * no caller (_start, clone's child): libdwfl reads the registers of that
 * frame before it asks, and one past the copy does not make the stack
 * short. */
static int ends_outermost(struct unwinder *u, struct proc_unwind *p)
{
	struct cfi_rule r;

	return last_rule(u, p, &r) && r.ra_how == CFI_UNDEFINED;
}

int unwinder_unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs,
		    const uint8_t *stack, size_t stack_len, uint64_t *frames, size_t max,
		    int *ended)
{
	if (ended)
		*ended = 0;
	if (!max)
		return 0;
	struct proc_unwind *p = proc_find(u, pid);
	/* A process whose modules could not be reported is retried only
	 * after its mappings change. */
	if (p && p->broken && p->dirty)
		proc_release(p);
	p = proc_get(u, pid);

	struct unwind_ctx *c = &u->cur;
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->tid = tid;
	c->regs = regs;
	c->stack = stack;
	c->stack_len = stack ? stack_len : 0;
	c->holes = u->holes;
	c->sp = regs[REG_SP];
	c->frames = frames;
	c->max = max;
	if (p && u->check)
		checked_unwind(u, p);
	else if (p && (c->n = fast_unwind(u, p)) == 0)
		dwfl_unwind(u, p);
	/* From a leaf without CFI libdwfl guesses by rbp, which there may
	 * hold anything (clone3's child has its parent's): its frames are
	 * kept up to the first that cannot be a return address. */
	struct cfi_rule leaf_rule;
	if (p && c->by_dwfl && !u->check && c->n > 1 &&
	    rule_at(u, p, regs[REG_IP], &leaf_rule) > 0 && leaf_rule.ra_how == CFI_NONE &&
	    !leaf_rule.go) {
		size_t k = 1;
		while (k < c->n && plausible_return(u, p, pid, c->frames[k]))
			k++;
		if (k < c->n) {
			c->n = k;
			c->ended = c->ran_out = 0;
		}
	}
	/* The unwinder gives nothing when the IP is in no module (JIT code,
	 * an unknown mapping): the IP alone is still a true frame. A read
	 * past the copy from a leaf in no file is a guess of libdwfl's (a
	 * frame pointer's garbage, in code without unwind information), not
	 * a stack cut short. */
	if (!c->n)
		frames[c->n++] = regs[REG_IP];
	const struct proc_map *leaf = c->n == 1 ? procs_find(u->procs, pid, regs[REG_IP]) : NULL;
	int leaf_unknown = c->n == 1 && (!leaf || !leaf->file);
	/* A walk that reached the outermost frame is whole, whatever read
	 * failed on the way (libdwfl goes on without a register it could not
	 * read where the CFA needs it not). */
	int whole = c->ended && (!c->ran_out || ends_outermost(u, p)) && c->n < c->max;
	u->end = whole			       ? UNWIND_END_WHOLE
		 : c->n >= c->max	       ? UNWIND_END_DEPTH
		 : ends_without_cfi(u, p)      ? UNWIND_END_NO_INFO
		 : c->ran_out && c->switched   ? UNWIND_END_OTHER_STACK
		 : c->ran_out && c->in_hole    ? UNWIND_END_NOT_PRESENT
		 : c->ran_out && !leaf_unknown ? UNWIND_END_COPY
					       : UNWIND_END_STOPPED;
	if (ended)
		*ended = u->end == UNWIND_END_WHOLE;
	return (int)c->n;
}

int unwind_is_mark(uint64_t addr)
{
	return addr > UNWIND_MARK_BASE && addr < UNWIND_MARK_BASE + UNWIND_END_KINDS;
}

const char *unwind_mark_name(uint64_t addr)
{
	switch (addr - UNWIND_MARK_BASE) {
	case UNWIND_END_COPY:
		return "[stack copy ended]";
	case UNWIND_END_DEPTH:
		return "[depth limit]";
	case UNWIND_END_NO_INFO:
		return "[no unwind info]";
	case UNWIND_END_OTHER_STACK:
		return "[interrupted stack not copied]";
	case UNWIND_END_NOT_PRESENT:
		return "[stack not in memory]";
	default:
		return "[unknown]";
	}
}

void unwinder_end_counts(const struct unwinder *u, uint64_t counts[UNWIND_END_KINDS])
{
	for (size_t i = 0; i < UNWIND_END_KINDS; i++)
		counts[i] = u ? u->ends[i] : 0;
}

uint64_t unwinder_copy_wanted(const struct unwinder *u)
{
	return u ? u->copy_wanted : 0;
}

/* Whether the function whose rule is r keeps its frame pointer there: its
 * CFA is rbp + 16, or it is Go code with a frame (Go keeps one in every
 * frame). Only then is the frame-pointer walk's next return address its
 * own caller's, not one further up. */
static int rule_keeps_fp(const struct cfi_rule *r)
{
	if (r->ra_how != CFI_SAVED_AT || r->ra_off != -8)
		return 0;
	return r->go_code ? r->cfa_reg == CFI_REG_SP && r->cfa_off >= 16
			  : r->cfa_reg == CFI_REG_BP && r->cfa_off == 16;
}

/* The same of the function at pc, by its rule. */
static int fp_kept_at(struct unwinder *u, struct proc_unwind *p, uint64_t pc)
{
	struct cfi_rule r;

	return p && rule_at(u, p, pc, &r) > 0 && rule_keeps_fp(&r);
}

/* The same of the function that return address ra returns into. */
static int keeps_fp(struct unwinder *u, struct proc_unwind *p, uint64_t ra)
{
	return fp_kept_at(u, p, ra - 1);
}

/*
 * Whether the function of frame k of f (the leaf at 0, return addresses
 * after it) is known not to keep its frame pointer there: its CFI says
 * where its caller's address is, and not as a frame pointer's (not Go's,
 * which keeps one in every frame). The kernel's walk, reading rbp past
 * it, skipped its caller (rbp was still a caller's further up) or read
 * garbage. Code without CFI (JIT code) or with a rule too complex to
 * read says nothing.
 */
static int drops_fp(struct unwinder *u, struct proc_unwind *p, const uint64_t *f, size_t k)
{
	struct cfi_rule r;
	uint64_t pc = k ? f[k] - 1 : f[k];

	return p && rule_at(u, p, pc, &r) > 0 && r.ra_how == CFI_SAVED_AT && !r.go && !r.go_code &&
	       !rule_keeps_fp(&r);
}

/*
 * The unwind of the copied stack (n frames at f) stopped short of the
 * stack's end; the frame-pointer walk (nfp entries, leaf first) goes on
 * from the deepest frame both reached. In recursion that frame's address
 * repeats: the walk is joined at the same repeat of it (the k-th, if the
 * unwound stack holds it k times). A walk that never meets the unwound
 * stack adds nothing: its frames could be a frame pointer's garbage. It
 * stops, and *cut is set, past a function known not to keep its frame
 * pointer (drops_fp()), and before a return address that could not be
 * one (the kernel's walk follows whatever rbp holds, up to its depth
 * limit). Returns the new count.
 */
static size_t go_on_by_fp(struct unwinder *u, struct proc_unwind *p, pid_t pid, uint64_t *f,
			  size_t n, size_t cap, const uint64_t *fp, size_t nfp, int *cut)
{
	uint64_t last = f[n - 1];
	size_t repeats = 0, i = 0;

	for (size_t k = 0; k < n; k++)
		repeats += f[k] == last;
	for (; i < nfp && repeats; i++)
		repeats -= fp[i] == last;
	if (repeats)
		return n;
	for (; i < nfp && n < cap; i++) {
		if (fp[i] >= PERF_CONTEXT_MAX || !fp[i])
			break;
		if (drops_fp(u, p, f, n - 1) || !plausible_return(u, p, pid, fp[i])) {
			*cut = 1;
			break;
		}
		f[n++] = fp[i];
	}
	return n;
}

/*
 * The callers of return address ra found at slot of pid's memory, stepped
 * by the CFI of the code each returns into up to the outermost frame (its
 * return address undefined: _start, clone3), into f (cap at most): their
 * count, or 0 when a step is not simple (a frame by rbp), a read fails or
 * an address could not be a return address. *slot0: where f[0] was read.
 */
static size_t tail_from(struct unwinder *u, struct proc_unwind *p, pid_t pid, uint64_t ra,
			uint64_t slot, uint64_t *f, size_t cap, uint64_t *slot0)
{
	uint64_t sp = slot + 8;
	size_t n = 0;

	for (;;) {
		struct cfi_rule r;
		if (rule_at(u, p, ra - 1, &r) <= 0)
			return 0;
		if (r.ra_how == CFI_UNDEFINED)
			return n;
		if (n == cap || r.ra_how != CFI_SAVED_AT || r.cfa_reg != CFI_REG_SP || r.go)
			return 0;
		uint64_t cfa = sp + (uint64_t)(int64_t)r.cfa_off;
		uint64_t at = cfa + (uint64_t)(int64_t)r.ra_off;
		if (cfa <= sp || proc_mem_read_all(pid, at, &ra, sizeof(ra)) != 0 ||
		    !plausible_return(u, p, pid, ra))
			return 0;
		if (!n)
			*slot0 = at;
		f[n++] = ra;
		sp = cfa;
	}
}

/*
 * The kernel's frame-pointer walk went on past the copy and its chain ended at return address ra
 * (f[n - 1]), in a function that keeps no frame pointer: a C library's __libc_start_call_main or
 * start_thread, whose callers (__libc_start_main and _start, clone3) the chain lost. Frames older
 * than a live one do not change while it lives, so they are read from the thread's memory now: ra
 * is looked for from the copy's end (from, in pid's memory) up, and the callers of the first place
 * that holds it are stepped by their CFI to the outermost frame. Each thread's answer is kept, and
 * checked against its memory at the next such sample (a thread gone, its number taken again),
 * or used as it is when the process is gone (they lived as long as it did); so is a search that
 * failed, not made again. Adds them after f[n - 1] and returns the new count, or n, unchanged,
 * where they were not found to the outermost frame.
 */
static size_t fp_chain_tail(struct unwinder *u, struct proc_unwind *p, pid_t pid, pid_t tid,
			    uint64_t from, uint64_t *f, size_t n, size_t cap)
{
	uint64_t ra = f[n - 1], word;
	struct fp_tail *t = &u->tails[((uint64_t)(uint32_t)tid * 31 + ra) % TAILS];

	if (t->pid == pid && t->tid == tid && t->ra == ra && !t->slot)
		return n;
	int known = t->pid == pid && t->tid == tid && t->ra == ra;
	int err = known ? proc_mem_read_all(pid, t->slot, &word, sizeof(word)) : 0;
	/* The function ra returns into may have called another since (main
	 * returned, and exit was called): its own return address, then, is
	 * where it was. */
	if (known && err == 0 && word != ra && t->n &&
	    (err = proc_mem_read_all(pid, t->slot0, &word, sizeof(word))) == 0 &&
	    word == t->frames[0])
		word = ra;
	/* A process gone by now (its last samples are read after it exits)
	 * kept them to its end. */
	if (!(known && ((err == 0 && word == ra) || err == -ESRCH))) {
		memset(t, 0, sizeof(*t));
		t->pid = pid, t->tid = tid, t->ra = ra;
		uint64_t buf[512];
		from = (from + 7) & ~7ull;
		for (uint64_t at = from; at < from + TAIL_SCAN && !t->slot;) {
			ssize_t got = proc_mem_read(pid, at, buf, sizeof(buf));
			if (got < 8)
				break;
			for (size_t i = 0; i < (size_t)got / 8 && !t->slot; i++)
				if (buf[i] == ra &&
				    (t->n = tail_from(u, p, pid, ra, at + 8 * i, t->frames,
						      TAIL_FRAMES, &t->slot0)) > 0)
					t->slot = at + 8 * i;
			at += (uint64_t)got & ~7ull;
		}
	}
	if (!t->slot || n + t->n > cap)
		return n;
	memcpy(f + n, t->frames, t->n * sizeof(*f));
	return n + t->n;
}

/*
 * The callers the kernel's frame-pointer walk (fp, nfp entries, the IP first) gives from entry
 * from on, added after the n frames at f for as long as each function keeps its frame pointer (past
 * one that does not, the walk skipped its caller or read garbage: *cut is set there). The function
 * of the frame before fp[from] is known to keep one. Returns the new count.
 */
static size_t fp_callers(struct unwinder *u, struct proc_unwind *p, uint64_t *f, size_t n,
			 size_t cap, const uint64_t *fp, size_t nfp, size_t from, int *cut)
{
	for (size_t i = from; i < nfp && n < cap; i++) {
		if (fp[i] >= PERF_CONTEXT_MAX || !fp[i])
			break;
		if (i > from && !keeps_fp(u, p, fp[i - 1])) {
			*cut = 1;
			break;
		}
		f[n++] = fp[i];
	}
	return n;
}

/*
 * The walk stopped at the frame a signal interrupted, on another stack than the copy's (the handler
 * ran on the thread's signal stack), with that frame's rbp its own frame pointer: the kernel's
 * frame-pointer walk went through the handler's frames, in the copy, up to that rbp (or started
 * there), and on to the interrupted frame's callers. The same walk is redone in the copy, each
 * return address checked against the kernel's, to find where in the kernel's list (fp, nfp
 * entries, the IP first) the callers begin; they are added after the n frames at f for as long as
 * each function keeps its frame pointer (past one that does not, the walk skipped its caller: *cut
 * is set there). Returns the new count.
 */
static size_t go_on_joined(struct unwinder *u, struct proc_unwind *p, uint64_t *f, size_t n,
			   size_t cap, const uint64_t *fp, size_t nfp, int *cut)
{
	const struct unwind_ctx *c = &u->cur;
	uint64_t bp = c->regs[REG_BP];
	size_t k = 0;

	while (bp != c->join_bp) {
		uint64_t next, ra;
		if (!copy_read(c, bp, &next) || !copy_read(c, bp + 8, &ra) || ++k >= nfp ||
		    fp[k] != ra || (next <= bp && next != c->join_bp))
			return n;
		bp = next;
	}
	return fp_callers(u, p, f, n, cap, fp, nfp, k + 1, cut);
}

/* The byte at addr in pid's memory (a breakpoint shows there as 0xCC,
 * unlike in the file), or -1 when it cannot be read. */
static int code_byte(pid_t pid, uint64_t addr)
{
	unsigned char byte = 0;

	return proc_mem_read_all(pid, addr, &byte, 1) == 0 ? byte : -1;
}

/* Whether addr in pid's memory holds a breakpoint: 0xCC there where the
 * file mapped at addr has another byte (compilers pad between functions
 * with 0xCC, and a signal handler or a thread starts at such a function's
 * first byte). Where the file cannot be read, the memory alone says. */
static int breakpoint_at(struct unwinder *u, pid_t pid, uint64_t addr)
{
	if (code_byte(pid, addr) != 0xcc)
		return 0;
	const struct proc_map *m = procs_find(u->procs, pid, addr);
	unsigned char byte = 0;
	if (m && m->file && sym_file_fd(m->file) >= 0 &&
	    pread(sym_file_fd(m->file), &byte, 1, (off_t)(m->pgoff + (addr - m->start))) == 1)
		return byte != 0xcc;
	return 1;
}

/*
 * The user IP to unwind from, for a sample taken in the kernel while its
 * thread was in the trap of a breakpoint (a uprobe's int3, anyone's),
 * whose registers may be caught between the probed instruction's address
 * and its effect. Whether a probed "push %rbp" has been run (emulated)
 * shows on the stack: its top word is rbp. Past the int3 (0xCC before
 * ip) with nothing pushed, the stack is as at ip - 1; at the int3 with
 * the push done, as at ip + 1. Unwound as reported, a function's first
 * instruction would lose its caller to a stack address.
 */
static uint64_t trap_ip(struct unwinder *u, pid_t pid, const uint64_t *regs, const uint8_t *stack,
			size_t len)
{
	uint64_t ip = regs[REG_IP], top = 0;

	if (len >= sizeof(top))
		memcpy(&top, stack, sizeof(top));
	int pushed = top && top == regs[REG_BP];
	if (!pushed && ip > 1 && breakpoint_at(u, pid, ip - 1))
		return ip - 1;
	if (pushed && breakpoint_at(u, pid, ip))
		return ip + 1;
	return ip;
}

/*
 * Whether the stack copy of smp, shorter than asked, ended at a page of the stack not in memory
 * rather than at the stack's end: a page never touched yet (a big frame's untouched middle; a
 * function's first touch of a new stack page, ld.so's as a program starts, deep recursion) or
 * swapped out. The kernel copies from the stack pointer sp on, up to the first page it cannot read;
 * the memory there now tells which (a page of the stack reads, past its end nothing does). The
 * stack pointer's own page, where an empty copy ended, is always the stack's.
 */
static int copy_ended_unpaged(const struct unwind_sample *smp, uint64_t sp)
{
	uint8_t byte;

	return !smp->stack_len || proc_mem_read_all(smp->pid, sp + smp->stack_len, &byte, 1) == 0;
}

/*
 * For a sample whose thread was running a probed instruction out of line
 * (a uprobe single-steps a copy of it in the "[uprobes]" page, where no
 * CFI says anything): the return address at the top of the stack, *ra,
 * where one is there. Probes sit at a function's first instruction or at
 * its returns, where that word is its caller's return address; a word
 * that cannot be one (a probe inside a function) leaves the stack as it
 * was, ended at the copy.
 */
static int xol_return(struct unwinder *u, const struct unwind_sample *smp, const uint64_t *regs,
		      uint64_t *ra)
{
	const struct proc_map *m = procs_find(u->procs, smp->pid, regs[REG_IP]);
	const struct proc_map *caller;

	if (!m || !m->path || strcmp(m->path, "[uprobes]") != 0 || smp->stack_len < 8 || smp->holes)
		return 0;
	memcpy(ra, smp->stack, sizeof(*ra));
	caller = procs_find(u->procs, smp->pid, *ra - 1);
	return caller && caller->file && plausible_return(u, proc_find(u, smp->pid), smp->pid, *ra);
}

size_t unwinder_sample(struct unwinder *u, const struct unwind_sample *smp, int fp_after,
		       size_t max_kernel, size_t max_user, uint64_t *out, size_t cap)
{
	size_t user = 0, nfp = 0, n;
	uint64_t at_trap[sizeof(dwarf_from_perf)];
	const uint64_t *regs = smp->regs;

	while (user < smp->nips && smp->ips[user] != (uint64_t)PERF_CONTEXT_USER)
		user++;
	if (user < smp->nips)
		nfp = smp->nips - user - 1;
	n = user < max_kernel ? user : max_kernel;
	if (n > cap)
		n = cap;
	if (n)
		memcpy(out, smp->ips, n * sizeof(*out));
	if (regs && user > 0 && smp->ips[0] == (uint64_t)PERF_CONTEXT_KERNEL) {
		uint64_t ip = trap_ip(u, smp->pid, regs, smp->stack, smp->stack_len);
		if (ip != regs[REG_IP]) {
			memcpy(at_trap, regs, sizeof(at_trap));
			at_trap[REG_IP] = ip;
			regs = at_trap;
		}
	}
	if (regs && n + 1 < cap) {
		out[n++] = (uint64_t)PERF_CONTEXT_USER;
		size_t max = cap - n < max_user ? cap - n : max_user;
		int ended = 0;
		const uint8_t *stack = smp->stack;
		size_t stack_len = smp->stack_len;
		uint64_t sp = regs[REG_SP], ra, at_xol[sizeof(dwarf_from_perf)];
		/* Out of line: that frame, then its caller's state as at the
		 * return, one word up the stack. */
		if (max > 1 && xol_return(u, smp, regs, &ra)) {
			out[n++] = regs[REG_IP];
			max--;
			memcpy(at_xol, regs, sizeof(at_xol));
			at_xol[REG_IP] = ra;
			at_xol[REG_SP] += 8;
			regs = at_xol;
			stack += 8;
			stack_len -= 8;
		}
		u->holes = smp->holes;
		int got = unwinder_unwind(u, smp->pid, smp->tid, regs, stack, stack_len, out + n,
					  max, &ended);
		u->holes = 0;
		int short_copy = u->end == UNWIND_END_COPY && smp->stack_asked &&
				 smp->stack_len < smp->stack_asked;
		int unpaged = short_copy && got > 0 && copy_ended_unpaged(smp, sp);
		/* Else a copy shorter than asked holds the stack to its end: a
		 * read past it was a guess, not a stack cut short. */
		int to_end = short_copy && !unpaged;
		/* With an empty copy only the leaf is known, and the frame
		 * pointers go on from it only where its rbp is its own. */
		int empty = unpaged && !smp->stack_len;
		if (unpaged)
			u->end = UNWIND_END_NOT_PRESENT;
		if (empty)
			got = 1;
		int unwound = got, cut = 0, garbage = 0;
		const struct unwind_ctx *c = &u->cur;
		struct proc_unwind *p = proc_find(u, smp->pid);
		if (empty) {
			/* The leaf keeps its frame pointer: its callers from
			 * the kernel's walk (past the IP). */
			if (fp_after && nfp && fp_kept_at(u, p, out[n]))
				got = (int)fp_callers(u, p, out + n, 1, max, smp->ips + user + 1,
						      nfp, 1, &cut);
		} else if (got > 0 && !ended && fp_after && nfp && c->join_ok &&
			   (size_t)got == c->join_frame)
			got = (int)go_on_joined(u, p, out + n, (size_t)got, max,
						smp->ips + user + 1, nfp, &cut);
		else if (got > 0 && !ended && fp_after && nfp && !c->no_fp) {
			got = (int)go_on_by_fp(u, p, smp->pid, out + n, (size_t)got, max,
					       smp->ips + user + 1, nfp, &garbage);
			/* Past the copy, a chain that ends after a function
			 * that drops its frame pointer (a C library's
			 * __libc_start_call_main, start_thread) lost that
			 * function's callers with it: they are read from the
			 * thread's memory, or else the stack ended where the
			 * copy did, which a larger one gets past. */
			if (!garbage && got > unwound && (size_t)got < max &&
			    drops_fp(u, p, out + n, (size_t)got - 1)) {
				size_t had = (size_t)got;
				got = (int)fp_chain_tail(u, p, smp->pid, smp->tid,
							 sp + smp->stack_len, out + n, had, max);
				if ((size_t)got > had)
					ended = 1;
				else if (u->end == UNWIND_END_COPY ||
					 u->end == UNWIND_END_NOT_PRESENT)
					garbage = 1;
			}
		}
		if (got > 0)
			n += (size_t)got;
		/* A stack the frame pointers went on with ends where their
		 * chain does, for no reason the walk can tell. One that ends
		 * in code without unwind information is marked but not
		 * counted: the outermost functions of Go (runtime.goexit,
		 * without CFI in a stripped binary) and of some C runtimes
		 * end whole stacks so, and only their names tell them apart
		 * (the resolver's, profile/resolve.c). */
		if (smp->mark_end && !ended && (got == unwound || garbage) && n < cap && !to_end &&
		    u->end != UNWIND_END_STOPPED) {
			out[n++] = UNWIND_MARK_BASE + u->end;
			u->ends[u->end] += u->end != UNWIND_END_NO_INFO;
			if (u->end == UNWIND_END_COPY && c->wanted > u->copy_wanted)
				u->copy_wanted = c->wanted;
		} else if (smp->mark_end && cut && n < cap) {
			enum unwind_end why =
			    empty ? UNWIND_END_NOT_PRESENT : UNWIND_END_OTHER_STACK;
			out[n++] = UNWIND_MARK_BASE + why;
			u->ends[why]++;
		}
	} else if (!n && cap) {
		out[n++] = smp->ip;
	}
	return n;
}

size_t unwind_copy_fp(uint64_t bp, uint64_t sp, const uint8_t *stack, size_t stack_len,
		      uint64_t *out, size_t cap, int *ended)
{
	size_t n = 0;

	while (n < cap && bp >= sp && bp - sp + 16 <= stack_len) {
		uint64_t next, ra;
		memcpy(&next, stack + (bp - sp), sizeof(next));
		memcpy(&ra, stack + (bp - sp) + 8, sizeof(ra));
		if (!ra)
			break;
		out[n++] = ra;
		if (next <= bp) {
			if (ended)
				*ended = next == 0;
			break;
		}
		bp = next;
	}
	return n;
}
