/*
 * Allocation sampling in the process (see alloc-fast.h): the allocators a
 * target maps found, their functions hooked through a fast set in
 * allocation mode, each hook told what it is, and the events read back.
 */
#include "sampling/alloc-fast.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/alloc-format.h"
#include "proc/proc-maps.h"
#include "sampling/alloc-fns.h"
#include "symbols/func-exits.h"
#include "symbols/symbolize.h"
#include "util/array.h"

#define CODE_MAX  (64u << 10) /* bytes of a function read for its exits */
#define ATTACH_MS 3000

/* A function hooked, in a process. */
struct hooked {
	pid_t pid;
	uint64_t addr, size;
};

/* What a hook's probe number stands for: a hooked function's entry, or
 * one of its exits (a ret, or a jump out). */
struct probe_of {
	uint8_t kind; /* RECCE_FAST_ALLOC_* byte */
};

struct alloc_fast {
	struct fast_alloc_config cfg;
	struct fast_set **sets;
	size_t nsets, sets_cap;
	struct fast_set_info info;
	struct hooked *fns;
	size_t nfns, fns_cap;
	struct probe_of *probes;
	size_t nprobes, probes_cap;
	char **paths;
	size_t npaths, paths_cap;
	size_t refused;
	const char *refused_name, *refused_why;
	uint64_t bad;
	int detach_err;
};

/* The countdowns: quantiles of the exponential law of mean interval,
 * which the library draws from at random. */
static void fill_draws(int64_t *draws, uint64_t interval)
{
	for (uint32_t i = 0; i < RECCE_FAST_ALLOC_DRAWS; i++) {
		double d = -(double)interval * log(1.0 - (i + 0.5) / RECCE_FAST_ALLOC_DRAWS);
		draws[i] = d < 1 ? 1 : (int64_t)d;
	}
}

struct alloc_fast *alloc_fast_new(uint64_t interval, uint32_t stack_bytes)
{
	struct alloc_fast *af = calloc(1, sizeof(*af));

	if (!af)
		return NULL;
	fill_draws(af->cfg.draws, interval ? interval : 1);
	af->cfg.stack_bytes = stack_bytes;
	return af;
}

const struct fast_set_info *alloc_fast_info(const struct alloc_fast *af)
{
	return &af->info;
}

size_t alloc_fast_refused(const struct alloc_fast *af, const char **name, const char **why)
{
	*name = af->refused_name;
	*why = af->refused_why;
	return af->refused;
}

static int new_probe(struct alloc_fast *af, uint8_t kind)
{
	struct probe_of *v =
	    array_reserve(af->probes, &af->probes_cap, af->nprobes + 1, sizeof(*af->probes));
	if (!v)
		return -ENOMEM;
	af->probes = v;
	af->probes[af->nprobes].kind = kind;
	return (int)af->nprobes++;
}

/* The kind byte of function fn's hooks. */
static uint8_t kind_byte(const struct alloc_fn *fn)
{
	return (uint8_t)((fn->kind & RECCE_FAST_ALLOC_KIND) |
			 (fn->kind & ALLOC_FN_GLIBC ? RECCE_FAST_ALLOC_GLIBC : 0));
}

/* The exits of fn (at addr) a trampoline hooks, with their probes: its
 * rets and jumps out; the conditional and indirect jumps out counted in
 * *undecided. A free needs none. */
static int find_exits(struct alloc_fast *af, struct sym_file *f, const struct alloc_fn *fn,
		      uint64_t addr, struct tramp_exit **out, size_t *n, size_t *undecided)
{
	struct func_exits fe = {0};
	size_t len = fn->size < CODE_MAX ? (size_t)fn->size : CODE_MAX, bad;
	uint8_t *code = malloc(len ? len : 1);
	int err = 0;

	*out = NULL;
	*n = *undecided = 0;
	if (!code)
		return -ENOMEM;
	if (!fn->size || fn->size > CODE_MAX ||
	    pread(sym_file_fd(f), code, len, (off_t)fn->offset) != (ssize_t)len)
		err = -ENODATA;
	if (!err)
		err = func_exits_find(code, len, fn->vaddr, &fe, &bad);
	free(code);
	struct tramp_exit *v = err ? NULL : calloc(fe.n ? fe.n : 1, sizeof(*v));
	if (!err && !v)
		err = -ENOMEM;
	for (size_t k = 0; !err && k < fe.n; k++) {
		const struct func_exit *x = &fe.v[k];
		if (x->kind != FUNC_EXIT_RET && x->kind != FUNC_EXIT_TAIL) {
			(*undecided)++;
			continue;
		}
		int p = new_probe(af, kind_byte(fn) |
					  (x->kind == FUNC_EXIT_RET ? RECCE_FAST_ALLOC_RET
								    : RECCE_FAST_ALLOC_JUMP));
		if (p < 0) {
			err = p;
			break;
		}
		v[*n] = (struct tramp_exit){addr + x->offset, x->length, p};
		(*n)++;
	}
	func_exits_release(&fe);
	if (err)
		free(v);
	else
		*out = v;
	return err;
}

static int remember_path(struct alloc_fast *af, const char *path)
{
	return array_add_string(&af->paths, &af->npaths, &af->paths_cap, path) < 0 ? -ENOMEM : 0;
}

/* Hooks function fn of f, at addr in the set's process: 1 when hooked, 0
 * when its code cannot hold the trampolines (counted), or -errno. */
static int hook_fn(struct alloc_fast *af, struct fast_set *set, pid_t pid, struct sym_file *f,
		   const struct alloc_fn *fn, uint64_t addr)
{
	struct tramp_exit *exits = NULL;
	size_t n = 0, undecided = 0;
	int free_fn = (fn->kind & 0xff) == ALLOC_FN_FREE;
	int err = free_fn ? 0 : find_exits(af, f, fn, addr, &exits, &n, &undecided);
	const char *why = NULL;

	if (err == -ENODATA || err == -EILSEQ)
		why = "its returns cannot be found: its size is unknown, or its code does not "
		      "decode";
	else if (!err && undecided)
		why = "it may return through a jump whose target is not known here";
	int entry = why || err ? -1 : new_probe(af, kind_byte(fn));
	if (entry < 0 && !why && !err)
		err = entry;
	if (!why && !err) {
		err = fast_set_add(set, addr, fn->size, entry, exits, n, 0);
		if (err == -ENOTSUP) {
			why = fast_refusal(pid, addr, fn->size, exits, n, 0);
			err = 0;
		}
	}
	free(exits);
	if (err)
		return err;
	if (why) {
		if (!af->refused++) {
			af->refused_name = fn->name;
			af->refused_why = why;
		}
		return 0;
	}
	struct hooked *v = array_reserve(af->fns, &af->fns_cap, af->nfns + 1, sizeof(*af->fns));
	if (!v)
		return -ENOMEM;
	af->fns = v;
	af->fns[af->nfns++] = (struct hooked){pid, addr, fn->size};
	return 1;
}

/* A function to hook, found in a file pid maps. */
struct found {
	struct sym_file *file;
	const char *path;
	struct alloc_fn fn;
	uint64_t addr;
};

/* The allocation functions of every allocator pid maps, into a heap
 * array (*n of them): 0, -ENOENT when it maps no malloc, or -ENOMEM. */
static int find_allocators(struct proc_registry *procs, struct symbolizer *sym, pid_t pid,
			   struct found **out, size_t *n)
{
	const struct proc_map *maps;
	size_t nmaps = procs_maps(procs, pid, &maps), cap = 0;
	int mallocs = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < nmaps; i++) {
		struct alloc_fn fns[ALLOC_FNS_MAX];
		int seen = 0;
		if (!maps[i].file || maps[i].path[0] != '/')
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = maps[j].file == maps[i].file;
		size_t nf = seen ? 0 : alloc_fns_find(sym, maps[i].file, fns);
		for (size_t k = 0; k < nf; k++) {
			uint64_t addr;
			if (procs_file_addr(procs, pid, maps[i].file, fns[k].vaddr, &addr) != 0)
				continue;
			struct found *v = array_reserve(*out, &cap, *n + 1, sizeof(**out));
			if (!v)
				return -ENOMEM;
			*out = v;
			(*out)[(*n)++] = (struct found){maps[i].file, maps[i].path, fns[k], addr};
			mallocs += strcmp(fns[k].name, "malloc") == 0;
		}
	}
	return mallocs ? 0 : -ENOENT;
}

/* Hooks the functions found into set: how many, or -ENOTSUP when a
 * malloc could not be. */
static int hook_allocators(struct alloc_fast *af, struct fast_set *set, pid_t pid,
			   const struct found *f, size_t n)
{
	int total = 0, malloc_refused = 0;

	for (size_t i = 0; i < n; i++) {
		int rc = hook_fn(af, set, pid, f[i].file, &f[i].fn, f[i].addr);
		if (rc < 0)
			return rc;
		total += rc;
		malloc_refused += !rc && strcmp(f[i].fn.name, "malloc") == 0;
		if (remember_path(af, f[i].path) < 0)
			return -ENOMEM;
	}
	return malloc_refused ? -ENOTSUP : total;
}

int alloc_fast_attach(struct alloc_fast *af, struct proc_registry *procs, struct symbolizer *sym,
		      pid_t pid)
{
	struct found *found = NULL;
	size_t nfound = 0;
	struct fast_set **v =
	    array_reserve(af->sets, &af->sets_cap, af->nsets + 1, sizeof(*af->sets));
	if (!v)
		return -ENOMEM;
	af->sets = v;
	memset(&af->info, 0, sizeof(af->info));
	int err = procs_scan(procs, pid);
	/* No library is loaded into a process with no allocator to hook (a
	 * Go program allocates in its runtime). */
	if (!err)
		err = find_allocators(procs, sym, pid, &found, &nfound);
	struct fast_set *set = NULL;
	if (!err)
		err = fast_set_new_alloc(pid, sym, &af->cfg, &set, &af->info);
	if (err) {
		free(found);
		fast_set_free(set);
		return err;
	}
	af->sets[af->nsets++] = set;
	int n = hook_allocators(af, set, pid, found, nfound);
	free(found);
	if (n < 0)
		return n;
	for (size_t id = 0; id < fast_set_nhooks(set); id++) {
		int probe;
		uint64_t ip;
		if (fast_set_hook(set, id, &probe, &ip) == 0 && probe >= 0 &&
		    (size_t)probe < af->nprobes &&
		    (err = fast_set_alloc_kind(set, id, af->probes[probe].kind)) != 0)
			return err;
	}
	err = fast_set_attach(set, ATTACH_MS);
	return err ? err : n;
}

int alloc_fast_read(struct alloc_fast *af, int (*cb)(const struct fast_alloc_event *, void *),
		    void *arg)
{
	int rc = 0;

	for (size_t i = 0; i < af->nsets && !rc; i++)
		rc = fast_set_read_allocs(af->sets[i], cb, arg, &af->bad);
	return rc;
}

int alloc_fast_inside(const struct alloc_fast *af, pid_t pid, uint64_t addr)
{
	for (size_t i = 0; i < af->nfns; i++)
		if (af->fns[i].pid == pid && addr >= af->fns[i].addr &&
		    addr - af->fns[i].addr < af->fns[i].size)
			return 1;
	return 0;
}

size_t alloc_fast_objects(const struct alloc_fast *af, const char *const **paths)
{
	*paths = (const char *const *)af->paths;
	return af->npaths;
}

void alloc_fast_stats(const struct alloc_fast *af, struct alloc_fast_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->bad = af->bad;
	st->detach_err = af->detach_err;
	for (size_t i = 0; i < af->nsets; i++) {
		uint64_t no_stack, untracked;
		fast_set_alloc_stats(af->sets[i], &no_stack, &untracked);
		st->lost += fast_set_lost(af->sets[i]);
		st->no_stack += no_stack;
		st->untracked += untracked;
		st->children += fast_set_unfound_calls(af->sets[i]);
	}
}

int alloc_fast_detach(struct alloc_fast *af)
{
	int err = 0;

	for (size_t i = 0; i < af->nsets; i++) {
		int e = fast_set_remove_all(af->sets[i]);
		err = err ? err : e;
	}
	if (err && !af->detach_err)
		af->detach_err = err;
	return err;
}

void alloc_fast_free(struct alloc_fast *af)
{
	if (!af)
		return;
	alloc_fast_detach(af);
	for (size_t i = 0; i < af->nsets; i++)
		fast_set_free(af->sets[i]);
	for (size_t i = 0; i < af->npaths; i++)
		free(af->paths[i]);
	free(af->paths);
	free(af->sets);
	free(af->fns);
	free(af->probes);
	free(af);
}
