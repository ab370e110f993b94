/*
 * From raw stacks to a symbolized profile (see resolve.h). Every address is
 * resolved once: locations and mappings are cached by key, so a profile of
 * 100,000 samples over 500 distinct addresses costs 500 symbol lookups.
 * The kernel's symbol table takes tens of milliseconds to read, so when a
 * batch of stacks holds kernel frames it is read by a second thread while
 * this one resolves the user frames.
 */
#include "profile/resolve.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/frame-name.h"
#include "proc/proc-maps.h"
#include "proc/py-names.h"
#include "proc/unwind.h"
#include "profile/aggregate.h"
#include "profile/offcpu-reason.h"
#include "profile/profile.h"
#include "profile/timeline.h"
#include "symbols/gopclntab.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htab.h"

#define KERNEL_START  0xffff800000000000ULL
#define CONTEXT_FLOOR ((uint64_t)-4095) /* PERF_CONTEXT_* markers are above */

/* A map from a (pid, generation, address, flag) key to an id (>= 1): the
 * keys and ids in an array, found through the hash table. */
struct key {
	uint64_t addr;
	uint32_t pid, gen;
	uint32_t flag;
};

struct idmap_entry {
	struct key key;
	uint64_t id;
};

struct idmap {
	struct htab table; /* key hash -> index in entries */
	struct idmap_entry *entries;
	size_t n, cap;
};

struct resolver {
	struct proc_registry *procs;
	struct symbolizer *sym;
	struct profile *prof;
	struct kallsyms *kallsyms;
	int kallsyms_tried;
	int kallsyms_loading;  /* kallsyms_thread runs and must be joined */
	int kallsyms_borrowed; /* resolver_use_kallsyms(): not ours to free */
	pthread_t kallsyms_thread;
	uint64_t kernel_mapping;
	struct idmap locations, mappings;
	struct frame_namer *namer;
	uint64_t *loc_ids; /* scratch: one sample's location ids */
	size_t loc_cap;
	uint64_t *spliced; /* scratch: the same with its Python frames in place */
	size_t spliced_cap;
	int addresses_only; /* resolver_keep_addresses() */
	size_t column;	    /* resolver_set_column() */
	int label_comm;	    /* resolver_label_comm() */
	int label_images;   /* resolver_label_images() */
	struct resolver_image *images;
	size_t nimages, images_cap;
	int no_info;	    /* the stack being resolved ends at code without unwind info */
	uint64_t no_info_samples; /* resolver_no_unwind_info() */
	uint64_t py_unplaced;	  /* resolver_python_unplaced() */
};

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = hash_fnv1a_value(HASH_FNV1A_INIT, k->addr);

	h = hash_fnv1a_value(h, (uint64_t)k->pid << 32 | k->gen);
	return hash_fnv1a_value(h, k->flag);
}

struct wanted_key {
	const struct idmap *m;
	const struct key *k;
};

static int key_matches(const void *ctx, uint64_t index)
{
	const struct wanted_key *w = ctx;
	const struct key *a = &w->m->entries[index].key, *b = w->k;

	return a->addr == b->addr && a->pid == b->pid && a->gen == b->gen && a->flag == b->flag;
}

/* The id of k, or 0. */
static uint64_t idmap_get(const struct idmap *m, const struct key *k)
{
	struct wanted_key w = {m, k};
	struct htab_slot *hit = htab_find(&m->table, key_hash(k), key_matches, &w);

	return hit ? m->entries[hit->val].id : 0;
}

static int idmap_put(struct idmap *m, const struct key *k, uint64_t id)
{
	struct idmap_entry *e = array_reserve(m->entries, &m->cap, m->n + 1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	m->entries = e;
	if (!htab_add(&m->table, key_hash(k), m->n))
		return -ENOMEM;
	m->entries[m->n++] = (struct idmap_entry){*k, id};
	return 0;
}

static void idmap_release(struct idmap *m)
{
	htab_release(&m->table);
	free(m->entries);
	memset(m, 0, sizeof(*m));
}

struct resolver *resolver_new(struct proc_registry *procs, struct symbolizer *sym,
			      int64_t period_ns)
{
	static const struct profile_value_type types[] = {
	    {"samples", "count"},
	    {"cpu", "nanoseconds"},
	};
	struct resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->procs = procs;
	r->sym = sym;
	r->prof = profile_new();
	r->namer = frame_namer_new(sym, procs);
	if (!r->prof || !r->namer || resolver_name_values(r, types[0].type, types[1].type) < 0)
		goto fail;
	r->prof->period = period_ns;
	return r;
fail:
	resolver_free(r);
	return NULL;
}

int resolver_name_values(struct resolver *r, const char *count, const char *time)
{
	const struct profile_value_type types[] = {{count, "count"}, {time, "nanoseconds"}};

	if (profile_set_sample_types(r->prof, types, 2) < 0)
		return -ENOMEM;
	r->prof->default_sample_type = 1;
	r->prof->period_type.type = profile_intern(r->prof, time);
	r->prof->period_type.unit = profile_intern(r->prof, "nanoseconds");
	if (!r->prof->period_type.type || !r->prof->period_type.unit)
		return -ENOMEM;
	return 0;
}

int resolver_name_allocations(struct resolver *r, int64_t interval, int growing)
{
	static const struct profile_value_type types[] = {
	    {"alloc_objects", "count"}, {"alloc_space", "bytes"},     {"inuse_objects", "count"},
	    {"inuse_space", "bytes"},	{"growing_objects", "count"}, {"growing_space", "bytes"},
	};
	if (profile_set_sample_types(r->prof, types, growing ? 6 : 4) < 0)
		return -ENOMEM;
	r->prof->default_sample_type = 1;
	r->prof->period_type.type = profile_intern(r->prof, "space");
	r->prof->period_type.unit = profile_intern(r->prof, "bytes");
	r->prof->period = interval;
	return r->prof->period_type.type && r->prof->period_type.unit ? 0 : -ENOMEM;
}

void resolver_label_comm(struct resolver *r, int on)
{
	r->label_comm = on;
}

void resolver_label_images(struct resolver *r, int on)
{
	r->label_images = on;
}

const struct resolver_image *resolver_image(const struct resolver *r, pid_t pid, uint32_t gen)
{
	for (size_t i = 0; r && i < r->nimages; i++)
		if (r->images[i].pid == pid && r->images[i].gen == gen)
			return &r->images[i];
	return NULL;
}

/* Keeps what pid's image is now, before an exec replaces it. */
static int keep_image(struct resolver *r, struct aggregate *a, pid_t pid)
{
	struct resolver_image *grown =
	    array_reserve(r->images, &r->images_cap, r->nimages + 1, sizeof(*r->images));
	if (!grown)
		return -ENOMEM;
	r->images = grown;
	struct resolver_image *im = &r->images[r->nimages];
	const char *comm = procs_comm(r->procs, pid), *exe, *build_id;

	procs_program(r->procs, pid, &exe, &build_id);
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->gen = aggregate_gen(a, pid);
	snprintf(im->comm, sizeof(im->comm), "%s", comm ? comm : "");
	snprintf(im->build_id, sizeof(im->build_id), "%s", build_id);
	if (!(im->exe = strdup(exe)))
		return -ENOMEM;
	r->nimages++;
	return 0;
}

void resolver_set_column(struct resolver *r, size_t column)
{
	r->column = column;
}

static void *kallsyms_loader(void *arg)
{
	struct resolver *r = arg;

	r->kallsyms = kallsyms_load(NULL);
	return NULL;
}

/* Starts reading the kernel's symbols, in a thread that takes no signals
 * (or here, if no thread can start). */
static void kallsyms_start(struct resolver *r)
{
	sigset_t all, old;

	if (r->kallsyms_tried)
		return;
	r->kallsyms_tried = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r->kallsyms_loading = pthread_create(&r->kallsyms_thread, NULL, kallsyms_loader, r) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!r->kallsyms_loading)
		r->kallsyms = kallsyms_load(NULL);
}

static void kallsyms_join(struct resolver *r)
{
	if (r->kallsyms_loading) {
		pthread_join(r->kallsyms_thread, NULL);
		r->kallsyms_loading = 0;
	}
}

static const struct kallsyms *kallsyms_wait(struct resolver *r)
{
	kallsyms_start(r);
	kallsyms_join(r);
	return r->kallsyms;
}

void resolver_use_kallsyms(struct resolver *r, const struct kallsyms *k)
{
	kallsyms_join(r);
	if (!r->kallsyms_borrowed)
		kallsyms_free(r->kallsyms);
	r->kallsyms = (struct kallsyms *)k;
	r->kallsyms_tried = 1;
	r->kallsyms_borrowed = 1;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	kallsyms_join(r);
	profile_free(r->prof);
	if (!r->kallsyms_borrowed)
		kallsyms_free(r->kallsyms);
	frame_namer_free(r->namer);
	idmap_release(&r->locations);
	idmap_release(&r->mappings);
	free(r->loc_ids);
	free(r->spliced);
	for (size_t i = 0; i < r->nimages; i++)
		free(r->images[i].exe);
	free(r->images);
	free(r);
}

uint64_t resolver_no_unwind_info(const struct resolver *r)
{
	return r ? r->no_info_samples : 0;
}

uint64_t resolver_python_unplaced(const struct resolver *r)
{
	return r ? r->py_unplaced : 0;
}

void resolver_jit_losses(const struct resolver *r, size_t *dropped, size_t *cut)
{
	frame_namer_jit_losses(r ? r->namer : NULL, dropped, cut);
}

size_t resolver_jit_unnamed(const struct resolver *r, pid_t *pids, size_t max)
{
	return frame_namer_jit_unnamed(r ? r->namer : NULL, pids, max);
}

void resolver_keep_addresses(struct resolver *r)
{
	r->addresses_only = 1;
}

struct profile *resolver_profile(struct resolver *r)
{
	return r->prof;
}

struct profile *resolver_take_profile(struct resolver *r)
{
	struct profile *p = r->prof;

	r->prof = NULL;
	return p;
}

/* A location of one function name and no line, in mapping mapping_id. */
static uint64_t location_named(struct resolver *r, uint64_t mapping_id, uint64_t addr,
			       const char *name)
{
	struct profile_line line = {0};

	line.function_id = profile_add_function(r->prof, name, name, "", 0);
	if (!line.function_id)
		return 0;
	return profile_add_location(r->prof, mapping_id, addr, &line, 1);
}

static uint64_t kernel_location(struct resolver *r, uint64_t addr, int nonleaf)
{
	if (!r->kernel_mapping) {
		r->kernel_mapping = profile_add_mapping(r->prof, KERNEL_START, UINT64_MAX, 0,
							"[kernel.kallsyms]", "");
		if (!r->kernel_mapping)
			return 0;
	}
	const struct kallsyms *k = kallsyms_wait(r);
	const char *name = NULL, *module = NULL;
	uint64_t start;
	if (k)
		name = kallsyms_lookup(k, nonleaf ? addr - 1 : addr, &module, &start);
	return location_named(r, r->kernel_mapping, addr, name ? name : "[kernel]");
}

static uint64_t mapping_id(struct resolver *r, pid_t pid, uint32_t gen, const struct proc_map *m)
{
	struct key k = {m->start, (uint32_t)pid, gen, 1};
	uint64_t id = idmap_get(&r->mappings, &k);

	if (id)
		return id;
	const char *build_id = m->file ? sym_file_build_id(m->file) : m->build_id;
	id = profile_add_mapping(r->prof, m->start, m->end, m->pgoff, m->path ? m->path : "",
				 build_id ? build_id : "");
	if (!id || idmap_put(&r->mappings, &k, id) < 0)
		return 0;
	struct profile_mapping *pm = &r->prof->mappings[id - 1];
	if (m->file && r->addresses_only && build_id && build_id[0]) {
		/* Named later, from the table kept now (or the binary). */
		symbolizer_keep_table(r->sym, m->file);
	} else if (m->file) {
		pm->has_functions = 1;
		pm->has_filenames = pm->has_line_numbers = pm->has_inline_frames =
		    sym_file_has_debuginfo(m->file) > 0;
	}
	return id;
}

static uint64_t user_location(struct resolver *r, pid_t pid, uint32_t gen, uint64_t addr,
			      int nonleaf)
{
	struct frame_name fn;
	char name[256];

	if (r->addresses_only) {
		const struct proc_map *m = procs_find(r->procs, pid, addr);
		const char *bid = m && m->file ? sym_file_build_id(m->file) : NULL;
		if (bid && bid[0]) {
			uint64_t map_id = mapping_id(r, pid, gen, m);
			return map_id ? profile_add_location(r->prof, map_id, addr, NULL, 0) : 0;
		}
	}
	frame_namer_user(r->namer, pid, addr, nonleaf, &fn);
	if (!fn.map)
		return location_named(r, 0, addr, "[unknown]");
	uint64_t map_id = mapping_id(r, pid, gen, fn.map);
	if (!map_id)
		return 0;
	/* A file gone before it could be opened, known by its build-id: the
	 * address alone, named later from the binary (recce symbolize, a
	 * report with the file back at its path or on debuginfod). */
	if (!fn.map->file && fn.map->build_id)
		return profile_add_location(r->prof, map_id, addr, NULL, 0);
	if (fn.kind != FRAME_SYMBOL) {
		frame_name_format(&fn, name, sizeof(name));
		return location_named(r, map_id, addr, name);
	}
	struct profile_line lines[FRAME_MAX_INLINE];
	if (resolve_lines(r->prof, fn.frames, fn.nframes, lines) < 0)
		return 0;
	return profile_add_location(r->prof, map_id, addr, lines, (size_t)fn.nframes);
}

int resolve_lines(struct profile *p, const struct sym_frame *frames, int n,
		  struct profile_line *lines)
{
	for (int i = 0; i < n; i++) {
		const struct sym_frame *f = &frames[i];
		lines[i].function_id = profile_add_function(
		    p, f->function, f->system_name ? f->system_name : f->function,
		    f->file ? f->file : "", 0);
		if (!lines[i].function_id)
			return -ENOMEM;
		lines[i].line = f->line;
	}
	return 0;
}

/* The location id of one frame, from the cache or resolved now. */
static uint64_t frame_location(struct resolver *r, pid_t pid, uint32_t gen, uint64_t addr,
			       int kernel, int nonleaf)
{
	struct key k = {addr, kernel ? 0 : (uint32_t)pid, kernel ? 0 : gen,
			(uint32_t)(nonleaf << 1 | kernel) + 2};
	uint64_t id = idmap_get(&r->locations, &k);

	if (id)
		return id;
	id = kernel ? kernel_location(r, addr, nonleaf) : user_location(r, pid, gen, addr, nonleaf);
	if (!id || idmap_put(&r->locations, &k, id) < 0)
		return 0;
	return id;
}

#define REASON_NAMES 64 /* frames below an off-CPU marker that can give its reason */
#define KEY_OFFCPU   64 /* key flag of the location of a marker frame */

/* The location of a marker frame named name (a string that lives as long
 * as the program), in no mapping, made once. */
static uint64_t marker_location(struct resolver *r, const char *name)
{
	struct key k = {(uint64_t)(uintptr_t)name, 0, 0, KEY_OFFCPU};
	uint64_t id = idmap_get(&r->locations, &k);

	if (id)
		return id;
	id = location_named(r, 0, 0, name);
	if (!id || idmap_put(&r->locations, &k, id) < 0)
		return 0;
	return id;
}

/* The location of an off-CPU marker, named by the reason that the
 * functions of the locations below it (ids, n of them, leaf first) give. */
static uint64_t offcpu_location(struct resolver *r, uint64_t mark, const uint64_t *ids, size_t n)
{
	const char *names[REASON_NAMES];
	size_t nnames = 0;

	for (size_t i = 0; i < n && nnames < REASON_NAMES; i++) {
		const struct profile_location *loc = profile_location(r->prof, ids[i]);
		for (size_t j = 0; loc && j < loc->nlines && nnames < REASON_NAMES; j++) {
			const struct profile_function *f =
			    profile_function(r->prof, loc->lines[j].function_id);
			if (f)
				names[nnames++] = f->name;
		}
	}
	return marker_location(r, offcpu_frame_name(mark, offcpu_reason(names, nnames)));
}

/* The location of an unwind's end marker (unwind.h): a frame named why
 * the stack ends there, in no mapping. */
static uint64_t unwind_end_location(struct resolver *r, uint64_t mark)
{
	return marker_location(r, unwind_mark_name(mark));
}

#define KEY_PYTHON 128 /* key flag of the location of a Python frame */

/* The location of Python frame id (py-names.h). */
static uint64_t python_location(struct resolver *r, uint64_t id)
{
	struct key k = {id, 0, 0, KEY_PYTHON};
	uint64_t loc = idmap_get(&r->locations, &k);
	const char *name = "[unknown Python code]", *file = "";
	int line = 0;

	if (loc)
		return loc;
	py_names_get(procs_py_names(r->procs), id, &name, &file, &line);
	struct profile_line pl = {0};
	pl.function_id = profile_add_function(r->prof, name, name, file, 0);
	pl.line = line;
	if (!pl.function_id || !(loc = profile_add_location(r->prof, 0, 0, &pl, 1)) ||
	    idmap_put(&r->locations, &k, loc) < 0)
		return 0;
	return loc;
}

/* The function location id is in (its outermost line's), or NULL. */
static const struct profile_function *outer_function(struct resolver *r, uint64_t id)
{
	const struct profile_location *loc = profile_location(r->prof, id);

	return loc && loc->nlines
		   ? profile_function(r->prof, loc->lines[loc->nlines - 1].function_id)
		   : NULL;
}

/* Whether location id is a C call of the interpreter, which ran Python
 * frames. */
static int runs_python(struct resolver *r, uint64_t id)
{
	const struct profile_function *f = outer_function(r, id);

	return f && py_eval_function(f->name);
}

/* Whether function f (NULL: none) is named one of names (n of them). */
static int named_one_of(const struct profile_function *f, const char *const *names, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		if (strcmp(f->name, names[i]) == 0)
			return 1;
	return 0;
}

/* Whether location id is the outermost frame of a Go stack: a function
 * the Go runtime marks TOPFRAME, which a thread or goroutine starts in,
 * or one that switches to the thread's own stack to call the scheduler
 * or grow a stack (mcall, morestack), as Go's own profiles show them. A
 * walk goes on past it into whatever its frame pointer held, and those
 * frames are not the program's. */
static int go_top_frame(struct resolver *r, uint64_t id)
{
	const struct profile_function *f = outer_function(r, id);

	return f && gopclntab_stack_top(f->name);
}

static int outermost_function(struct resolver *r, uint64_t id);

/*
 * The Python frames of s (from frames[from] on, innermost first, see
 * py-names.h) in place of the native frames that ran them: each group up
 * to a frame marked PY_STACK_ENTRY replaces the next C call of the
 * interpreter among r->loc_ids (nlocs of them, leaf first); groups the
 * native walk did not reach go at the root end. A walk that reached the
 * program's or the thread's first function left none unreached: groups
 * left over then mean the frames and the stack disagree (read while a
 * call began or ended), and the sample keeps its native frames only,
 * counted in r->py_unplaced.
 */
static int splice_python(struct resolver *r, const struct agg_stack *s, size_t from, size_t nlocs,
			 size_t *nlocs_out)
{
	size_t npy = s->nframes - from;
	uint64_t *out = array_reserve(r->spliced, &r->spliced_cap, nlocs + npy, sizeof(*out));
	if (!out)
		return -ENOMEM;
	r->spliced = out;
	size_t n = 0, g = 0;
	for (size_t i = 0; i <= nlocs; i++) {
		int at_root = i == nlocs;
		if (at_root && g < npy && nlocs && outermost_function(r, r->loc_ids[nlocs - 1])) {
			r->py_unplaced += s->count;
			*nlocs_out = nlocs;
			return 0;
		}
		if (g < npy && (at_root || runs_python(r, r->loc_ids[i]))) {
			/* One group, or at the root all that is left. */
			while (g < npy) {
				uint64_t v = s->frames[from + g++];
				uint64_t id = python_location(r, v & PY_STACK_ID);
				if (!id)
					return -ENOMEM;
				out[n++] = id;
				if ((v & PY_STACK_ENTRY) && !at_root)
					break;
			}
			continue;
		}
		if (!at_root)
			out[n++] = r->loc_ids[i];
	}
	/* The spliced stack becomes r->loc_ids. */
	r->spliced = r->loc_ids;
	r->loc_ids = out;
	size_t cap = r->spliced_cap;
	r->spliced_cap = r->loc_cap;
	r->loc_cap = cap;
	*nlocs_out = n;
	return 0;
}

/* Whether the kernel part of s is a probe's own work: the thread was in
 * the trap of a uprobe's breakpoint (recce's, or anyone's) or of the
 * single step after it when the sample was taken, and the frames above
 * its code (asm_exc_int3, uprobe_notify_resume, a BPF program) are the
 * probe's, not the user's. */
static int in_probe_handler(struct resolver *r, const struct agg_stack *s)
{
	/* The breakpoint's trap and the single step after it, which in a
	 * user thread only probes (and debuggers) cause, and the probe's
	 * own handlers. */
	static const char *const probe_fns[] = {
	    "asm_exc_int3",	    "asm_exc_debug",
	    "exc_debug_user",	    "uprobe_notify_resume",
	    "handle_swbp",	    "uprobe_dispatcher",
	    "uretprobe_dispatcher", "uprobe_multi_link_handler"};
	int kernel = 0;
	size_t named = 0, bpf = 0;

	for (size_t i = 0; i < s->nframes; i++) {
		uint64_t addr = s->frames[i];
		if (addr >= CONTEXT_FLOOR) {
			kernel = addr == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (!kernel)
			continue;
		const struct kallsyms *k = kallsyms_wait(r);
		const char *module = NULL, *name;
		uint64_t start;
		if (!k || !(name = kallsyms_lookup(k, addr, &module, &start)))
			continue;
		named++;
		bpf += strncmp(name, "bpf_prog_", 9) == 0;
		for (size_t j = 0; j < sizeof(probe_fns) / sizeof(probe_fns[0]); j++)
			if (strcmp(name, probe_fns[j]) == 0)
				return 1;
	}
	/* A kernel part that is a BPF program alone: the kernel's unwinder
	 * stopped at its JIT code, which in a user thread's stack a probe's
	 * trap ran (a system call's entry would be there too). */
	return named && bpf == named;
}

/* Whether location id is a function that starts a program's or a
 * thread's stack, where a walk ends whole, with or without unwind
 * information to say so. */
static int outermost_function(struct resolver *r, uint64_t id)
{
	static const char *const top[] = {"_start",	  "start_thread",   "clone",
					  "__clone",	  "clone3",	    "__clone3",
					  "thread_start", "_dl_start_user", "__thread_start"};

	return named_one_of(outer_function(r, id), top, sizeof(top) / sizeof(top[0]));
}

#define KEY_NO_INFO 256 /* key flag of the marker of a walk's end at a location */

/* The marker of a walk that ended at location id, in code without unwind
 * information: "[no unwind info: FILE+0xOFFSET]", made once a location;
 * 1 for none where that code is an outermost function (a whole stack). */
static uint64_t no_info_location(struct resolver *r, uint64_t id)
{
	if (outermost_function(r, id))
		return 1;
	struct key k = {id, 0, 0, KEY_NO_INFO};
	uint64_t got = idmap_get(&r->locations, &k);
	if (got)
		return got;
	const struct profile_location *loc = profile_location(r->prof, id);
	const struct profile_mapping *m =
	    loc && loc->mapping_id ? profile_mapping(r->prof, loc->mapping_id) : NULL;
	char name[320];
	if (m && m->file && *m->file && loc->address >= m->start) {
		const char *base = strrchr(m->file, '/');
		snprintf(name, sizeof(name), "[no unwind info: %s+0x%llx]",
			 base ? base + 1 : m->file,
			 (unsigned long long)(loc->address - m->start + m->offset));
	} else {
		snprintf(name, sizeof(name), "%s",
			 unwind_mark_name(UNWIND_MARK_BASE + UNWIND_END_NO_INFO));
	}
	got = location_named(r, 0, 0, name);
	if (!got || idmap_put(&r->locations, &k, got) < 0)
		return 0;
	return got;
}

/* Resolves the frames of s into r->loc_ids (*nlocs of them); with
 * user_only, resolves its user frames only, to fill the cache. An
 * off-CPU marker (offcpu-reason.h) is named after the frames below it. */
static int stack_locations(struct resolver *r, const struct agg_stack *s, int user_only,
			   size_t *nlocs_out)
{
	uint64_t *ids = array_reserve(r->loc_ids, &r->loc_cap, s->nframes, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	r->loc_ids = ids;
	size_t nlocs = 0;
	int kernel = -1; /* unknown until a context marker says */
	int first = 1;	 /* the next frame is the first of its context: not a return address */
	uint64_t mark = 0;
	size_t mark_at = 0, python = 0;
	/* A probe's frames are cut: the stack starts at the probed code. */
	int skip_kernel = !user_only && in_probe_handler(r, s);
	for (size_t i = 0; i < s->nframes; i++) {
		uint64_t addr = s->frames[i];
		if (addr == PY_STACK_MARK) {
			python = i + 1; /* the rest are Python frames */
			break;
		}
		if (offcpu_is_mark(addr)) {
			if (!user_only && !mark) {
				mark = addr;
				mark_at = nlocs++;
			}
			continue;
		}
		if (unwind_is_mark(addr)) {
			uint64_t id = user_only ? 1
				      : addr != UNWIND_MARK_BASE + UNWIND_END_NO_INFO
					  ? unwind_end_location(r, addr)
				      : nlocs ? no_info_location(r, r->loc_ids[nlocs - 1])
					      : 1;
			if (!id)
				return -ENOMEM;
			if (!user_only && id != 1)
				r->loc_ids[nlocs++] = id;
			r->no_info =
			    !user_only && id != 1 && addr == UNWIND_MARK_BASE + UNWIND_END_NO_INFO;
			continue;
		}
		if (addr >= CONTEXT_FLOOR) {
			if (addr == (uint64_t)PERF_CONTEXT_KERNEL)
				kernel = 1;
			else if (addr == (uint64_t)PERF_CONTEXT_USER)
				kernel = 0;
			else
				kernel = 2; /* guest or hypervisor: not ours to name */
			first = 1;
			continue;
		}
		if (kernel == 2)
			continue;
		int is_kernel = kernel >= 0 ? kernel : addr >= KERNEL_START;
		int nonleaf = !first;
		first = 0;
		if ((user_only || skip_kernel) && is_kernel)
			continue;
		uint64_t id = frame_location(r, (pid_t)s->pid, s->gen, addr, is_kernel, nonleaf);
		if (!id)
			return -ENOMEM;
		r->loc_ids[nlocs++] = id;
		if (!is_kernel && go_top_frame(r, id))
			break; /* what lies past a Go stack's top is no caller */
	}
	if (mark) {
		uint64_t id =
		    offcpu_location(r, mark, r->loc_ids + mark_at + 1, nlocs - mark_at - 1);
		if (!id)
			return -ENOMEM;
		r->loc_ids[mark_at] = id;
	}
	if (python && !user_only)
		return splice_python(r, s, python, nlocs, nlocs_out);
	*nlocs_out = nlocs;
	return 0;
}

static int resolve_stack(struct resolver *r, struct aggregate *a, const struct agg_stack *s)
{
	size_t nlocs;
	r->no_info = 0;
	int err = stack_locations(r, s, 0, &nlocs);

	if (err)
		return err;
	r->no_info_samples += r->no_info ? s->count : 0;
	int64_t values[6] = {0, 0, 0, 0, 0, 0};
	if (r->column + 2 > r->prof->nsample_types || r->prof->nsample_types > 6)
		return -EINVAL;
	values[r->column] = (int64_t)s->count;
	values[r->column + 1] = (int64_t)s->period;
	struct profile_label labels[5];
	size_t nlabels = 0;
	memset(labels, 0, sizeof(labels));
	labels[nlabels].key = "pid";
	labels[nlabels++].num = s->pid;
	labels[nlabels].key = "tid";
	labels[nlabels++].num = s->tid;
	const char *name = aggregate_thread_name(a, (pid_t)s->tid);
	if (!name)
		name = procs_comm(r->procs, (pid_t)s->pid);
	if (name && *name) {
		labels[nlabels].key = "thread";
		labels[nlabels++].str = name;
	}
	const char *comm = r->label_comm ? procs_comm(r->procs, (pid_t)s->pid) : NULL;
	if (comm && *comm) {
		labels[nlabels].key = "comm";
		labels[nlabels++].str = comm;
	}
	if (r->label_images) {
		labels[nlabels].key = "image";
		labels[nlabels++].num = s->gen;
	}
	return profile_add_sample(r->prof, r->loc_ids, nlocs, values, labels, nlabels);
}

static int has_kernel_frames(const struct agg_stack *s)
{
	for (size_t i = 0; i < s->nframes; i++)
		if (s->frames[i] == (uint64_t)PERF_CONTEXT_KERNEL ||
		    (s->frames[i] >= KERNEL_START && s->frames[i] < CONTEXT_FLOOR))
			return 1;
	return 0;
}

/* Whether resolver_add(..., pid) has s still to resolve. */
static int pending(const struct agg_stack *s, pid_t pid)
{
	return !s->resolved && (!pid || s->pid == (uint32_t)pid);
}

int resolver_add(struct resolver *r, struct aggregate *a, pid_t pid)
{
	if (!r->prof)
		return -EINVAL;
	if (pid && r->label_images && !resolver_image(r, pid, aggregate_gen(a, pid))) {
		int err = keep_image(r, a, pid);
		if (err)
			return err;
	}
	size_t n = aggregate_nstacks(a), nlocs;
	for (size_t i = 0; i < n && !r->kallsyms_tried; i++) {
		const struct agg_stack *s = aggregate_stack(a, i);
		if (pending(s, pid) && has_kernel_frames(s))
			kallsyms_start(r);
	}
	/* While the kernel's symbols load, the user frames are resolved. */
	for (size_t i = 0; i < n && r->kallsyms_loading; i++) {
		const struct agg_stack *s = aggregate_stack(a, i);
		if (!pending(s, pid))
			continue;
		int err = stack_locations(r, s, 1, &nlocs);
		if (err)
			return err;
	}
	for (size_t i = 0; i < n; i++) {
		struct agg_stack *s = aggregate_stack(a, i);
		if (!pending(s, pid))
			continue;
		int err = resolve_stack(r, a, s);
		if (err)
			return err;
		/* The sample's index + 1, which resolver_add_timeline() needs. */
		s->resolved = (uint32_t)r->prof->nsamples;
	}
	return 0;
}

int resolver_add_timeline(struct resolver *r, struct aggregate *a)
{
	struct timeline_writer *w = aggregate_timeline(a);
	struct timeline_event *ev = NULL;
	unsigned char *buf = NULL;
	size_t nev, len, nstacks = aggregate_nstacks(a);
	uint64_t *remap = NULL;
	int ret;

	if (!w || !r->prof)
		return 0;
	ret = timeline_writer_take(w, &buf, &len);
	if (!ret)
		ret = timeline_decode(buf, len, nstacks, &ev, &nev);
	free(buf);
	buf = NULL;
	remap = calloc(nstacks + 1, sizeof(*remap));
	if (!ret && !remap)
		ret = -ENOMEM;
	if (ret)
		goto out;
	/* Stacks never resolved have no sample: their events are left out. */
	for (size_t i = 0; i < nstacks; i++)
		remap[i] = aggregate_stack(a, i)->resolved;
	ret = timeline_remap(ev, nev, remap, &buf, &len);
	if (!ret)
		ret = profile_set_timeline(r->prof, buf, len);
out:
	free(buf);
	free(ev);
	free(remap);
	return ret;
}
