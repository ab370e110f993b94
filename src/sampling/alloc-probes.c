/*
 * Finding a process's allocator and probing it (see alloc-probes.h).
 */
#include "sampling/alloc-probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/alloc-bpf.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "symbols/symbolize.h"
#include "util/array.h"

/* The functions probed in an allocator, by symbol. */
static const struct {
	const char *name;
	uint8_t kind;
} fns[] = {
    {"malloc", ALLOC_FN_MALLOC},
    {"calloc", ALLOC_FN_CALLOC},
    {"realloc", ALLOC_FN_REALLOC},
    {"free", ALLOC_FN_FREE},
    {"aligned_alloc", ALLOC_FN_ALIGNED},
    {"memalign", ALLOC_FN_ALIGNED},
    {"posix_memalign", ALLOC_FN_POSIX_MEMALIGN},
    {"valloc", ALLOC_FN_MALLOC},
    {"pvalloc", ALLOC_FN_MALLOC},
    /* jemalloc's own interface */
    {"mallocx", ALLOC_FN_MALLOC},
    {"rallocx", ALLOC_FN_REALLOC},
    {"dallocx", ALLOC_FN_FREE},
    {"sdallocx", ALLOC_FN_FREE},
    /* operator new and delete, where the allocator itself defines them
     * (libstdc++'s call malloc, and are not probed) */
    {"_Znwm", ALLOC_FN_MALLOC},
    {"_Znam", ALLOC_FN_MALLOC},
    {"_ZnwmRKSt9nothrow_t", ALLOC_FN_MALLOC},
    {"_ZnamRKSt9nothrow_t", ALLOC_FN_MALLOC},
    {"_ZdlPv", ALLOC_FN_FREE},
    {"_ZdaPv", ALLOC_FN_FREE},
    {"_ZdlPvm", ALLOC_FN_FREE},
    {"_ZdaPvm", ALLOC_FN_FREE},
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

struct probed {
	pid_t pid;
	struct sym_file *file;
	size_t n; /* the functions probed: file offsets and sizes */
	uint64_t offsets[NFNS], sizes[NFNS];
};

struct alloc_probes {
	struct alloc_bpf bpf;
	int (*links)[2]; /* a file's links: session or entry, and return (or -1) */
	size_t nlinks, links_cap;
	struct probed *probed; /* per process and file */
	size_t nprobed, probed_cap;
	const char **paths; /* distinct paths of the files probed */
	size_t npaths;
	int detached;
};

int alloc_probes_new(uint64_t interval, struct perf_events *pe, int no_sessions,
		     struct alloc_probes **out)
{
	struct alloc_probes *ap = calloc(1, sizeof(*ap));
	int cpu, max_cpu = 0;

	if (!ap)
		return -ENOMEM;
	for (size_t i = 0; perf_events_output_fd(pe, i, &cpu) >= 0; i++)
		if (cpu > max_cpu)
			max_cpu = cpu;
	int err = alloc_bpf_new(&ap->bpf, interval, (size_t)max_cpu + 1, no_sessions, NULL, 0);
	if (err == -EINVAL)
		err = -EOPNOTSUPP; /* no uprobe_multi attach type to load for */
	if (err == -EPERM)
		err = -EACCES;
	for (size_t i = 0; !err; i++) {
		int fd = perf_events_output_fd(pe, i, &cpu);
		if (fd < 0)
			break;
		err = alloc_bpf_set_output(&ap->bpf, cpu, fd);
	}
	if (err) {
		alloc_probes_free(ap);
		return err;
	}
	*out = ap;
	return 0;
}

/* A file's links closed: the probes out. */
static void close_links(const int link[2])
{
	close(link[0]);
	if (link[1] >= 0)
		close(link[1]);
}

int alloc_probes_sessions(const struct alloc_probes *ap)
{
	return ap->bpf.sessions;
}

static int is_probed(const struct alloc_probes *ap, pid_t pid, const struct sym_file *f)
{
	for (size_t i = 0; i < ap->nprobed; i++)
		if (ap->probed[i].pid == pid && ap->probed[i].file == f)
			return 1;
	return 0;
}

/* Keeps pr and its link (links[i] belongs to probed[i]), and path among
 * the distinct paths probed. */
static int remember(struct alloc_probes *ap, const struct probed *pr, const char *path,
		    const int link[2])
{
	struct probed *np =
	    array_reserve(ap->probed, &ap->probed_cap, ap->nprobed + 1, sizeof(*ap->probed));
	if (np)
		ap->probed = np;
	int(*nl)[2] = array_reserve(ap->links, &ap->links_cap, ap->nlinks + 1, sizeof(*ap->links));
	if (nl)
		ap->links = nl;
	const char **paths = realloc(ap->paths, (ap->npaths + 1) * sizeof(*paths));
	if (paths)
		ap->paths = paths;
	int seen = 0;
	for (size_t i = 0; paths && i < ap->npaths && !seen; i++)
		seen = strcmp(ap->paths[i], path) == 0;
	char *copy = seen ? NULL : strdup(path);
	if (!np || !nl || !paths || (!seen && !copy))
		return -ENOMEM;
	ap->links[ap->nlinks][0] = link[0];
	ap->links[ap->nlinks++][1] = link[1];
	ap->probed[ap->nprobed++] = *pr;
	if (copy)
		ap->paths[ap->npaths++] = copy;
	return 0;
}

/* Probes f's allocation functions, if it defines malloc. Returns how many,
 * 0 when it is no allocator, or -errno. */
static int probe_file(struct alloc_probes *ap, struct symbolizer *sym, struct sym_file *f,
		      const char *path, pid_t pid)
{
	struct probed pr = {pid, f, 0, {0}, {0}};
	uint16_t kinds[NFNS];
	uint64_t vaddr, size;

	if (symbolizer_find_symbol(sym, f, "malloc", &vaddr, NULL) < 0)
		return 0;
	uint16_t flags =
	    symbolizer_find_symbol(sym, f, "__libc_malloc", &vaddr, NULL) == 0 ? ALLOC_FN_GLIBC : 0;
	for (size_t i = 0; i < NFNS; i++) {
		uint64_t off;
		int dup = 0;
		if (symbolizer_find_symbol(sym, f, fns[i].name, &vaddr, &size) < 0 ||
		    sym_file_vaddr_to_offset(f, vaddr, &off) < 0)
			continue;
		for (size_t j = 0; j < pr.n && !dup; j++)
			dup = pr.offsets[j] == off; /* an alias: memalign is aligned_alloc */
		if (dup)
			continue;
		pr.offsets[pr.n] = off;
		pr.sizes[pr.n] = size;
		kinds[pr.n++] = fns[i].kind | flags;
	}
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", sym_file_fd(f));
	int link[2];
	int err = alloc_bpf_attach(&ap->bpf, fdpath, pr.offsets, kinds, pr.n, pid, link);
	if (err < 0)
		return err;
	int n = (int)pr.n;
	err = remember(ap, &pr, path, link);
	if (err) {
		close_links(link);
		return err;
	}
	return n;
}

int alloc_probes_attach(struct alloc_probes *ap, struct proc_registry *procs,
			struct symbolizer *sym, pid_t pid)
{
	const struct proc_map *maps;

	if (ap->detached)
		return -ECANCELED;
	int err = procs_scan(procs, pid);

	if (err)
		return err;
	size_t nmaps = procs_maps(procs, pid, &maps);
	int total = 0;
	for (size_t i = 0; i < nmaps; i++) {
		if (!maps[i].file || maps[i].path[0] != '/' || is_probed(ap, pid, maps[i].file))
			continue;
		int n = probe_file(ap, sym, maps[i].file, maps[i].path, pid);
		if (n < 0)
			return n;
		total += n;
	}
	return total ? total : -ENOENT;
}

int alloc_probes_inside(const struct alloc_probes *ap, struct proc_registry *procs, pid_t pid,
			uint64_t addr)
{
	const struct proc_map *m = procs_find(procs, pid, addr);

	if (!m || !m->file)
		return 0;
	uint64_t off = addr - m->start + m->pgoff;
	for (size_t i = 0; i < ap->nprobed; i++) {
		const struct probed *pr = &ap->probed[i];
		if (pr->pid != pid || pr->file != m->file)
			continue;
		for (size_t j = 0; j < pr->n; j++)
			if (off >= pr->offsets[j] && off - pr->offsets[j] < pr->sizes[j])
				return 1;
	}
	return 0;
}

size_t alloc_probes_objects(const struct alloc_probes *ap, const char *const **paths)
{
	*paths = (const char *const *)ap->paths;
	return ap->npaths;
}

void alloc_probes_forget(struct alloc_probes *ap, pid_t pid)
{
	size_t j = 0;

	/* links[i] belongs to probed[i] (remember()); after
	 * alloc_probes_detach() the links are gone and the rest stays. */
	if (ap->detached || ap->nlinks != ap->nprobed)
		return;
	for (size_t i = 0; i < ap->nprobed && i < ap->nlinks; i++) {
		if (ap->probed[i].pid == pid) {
			close_links(ap->links[i]);
			continue;
		}
		ap->links[j][0] = ap->links[i][0];
		ap->links[j][1] = ap->links[i][1];
		ap->probed[j++] = ap->probed[i];
	}
	ap->nprobed = ap->nlinks = j;
}

void alloc_probes_detach(struct alloc_probes *ap)
{
	ap->detached = 1;
	for (size_t i = 0; i < ap->nlinks; i++)
		close_links(ap->links[i]);
	ap->nlinks = 0;
	alloc_bpf_release(&ap->bpf);
}

void alloc_probes_free(struct alloc_probes *ap)
{
	if (!ap)
		return;
	alloc_probes_detach(ap);
	for (size_t i = 0; i < ap->npaths; i++)
		free((char *)ap->paths[i]);
	free(ap->probed);
	free(ap->paths);
	free(ap->links);
	free(ap);
}
