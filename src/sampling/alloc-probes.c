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
#include "sampling/alloc-fns.h"
#include "perf/perf-events.h"
#include "proc/proc-maps.h"
#include "symbols/symbolize.h"
#include "util/array.h"

#define NFNS ALLOC_FNS_MAX

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
	struct alloc_fn found[ALLOC_FNS_MAX];
	uint16_t kinds[NFNS];

	size_t n = alloc_fns_find(sym, f, found);
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pr.offsets[i] = found[i].offset;
		pr.sizes[i] = found[i].size;
		kinds[i] = found[i].kind;
	}
	pr.n = n;
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", sym_file_fd(f));
	int link[2];
	int err = alloc_bpf_attach(&ap->bpf, fdpath, pr.offsets, kinds, pr.n, pid, link);
	if (err < 0)
		return err;
	err = remember(ap, &pr, path, link);
	if (err) {
		close_links(link);
		return err;
	}
	return (int)n;
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
