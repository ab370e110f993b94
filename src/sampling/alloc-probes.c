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
	size_t nfds; /* its links and events, in the order to close them */
	int fds[ALLOC_BPF_FDS(NFNS)];
};

struct alloc_probes {
	struct alloc_bpf bpf;
	struct probed *probed; /* per process and file */
	size_t nprobed, probed_cap;
	const char **paths; /* distinct paths of the files probed */
	size_t npaths;
	int detached;
};

int alloc_probes_new(uint64_t interval, struct perf_events *pe, enum alloc_bpf_mode newest,
		     struct alloc_probes **out)
{
	struct alloc_probes *ap = calloc(1, sizeof(*ap));
	int cpu, max_cpu = 0;

	if (!ap)
		return -ENOMEM;
	for (size_t i = 0; perf_events_output_fd(pe, i, &cpu) >= 0; i++)
		if (cpu > max_cpu)
			max_cpu = cpu;
	int err = alloc_bpf_new(&ap->bpf, interval, (size_t)max_cpu + 1, newest, NULL, 0);
	if (err == -EINVAL)
		err = -EOPNOTSUPP; /* no uprobe program to load */
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

/* A file's links and events closed: its probes out. */
static void close_fds(struct probed *pr)
{
	for (size_t i = 0; i < pr->nfds; i++)
		close(pr->fds[i]);
	pr->nfds = 0;
}

enum alloc_bpf_mode alloc_probes_mode(const struct alloc_probes *ap)
{
	return ap->bpf.mode;
}

static int is_probed(const struct alloc_probes *ap, pid_t pid, const struct sym_file *f)
{
	for (size_t i = 0; i < ap->nprobed; i++)
		if (ap->probed[i].pid == pid && ap->probed[i].file == f)
			return 1;
	return 0;
}

/* Keeps pr, and path among the distinct paths probed. */
static int remember(struct alloc_probes *ap, const struct probed *pr, const char *path)
{
	struct probed *np =
	    array_reserve(ap->probed, &ap->probed_cap, ap->nprobed + 1, sizeof(*ap->probed));
	if (np)
		ap->probed = np;
	const char **paths = realloc(ap->paths, (ap->npaths + 1) * sizeof(*paths));
	if (paths)
		ap->paths = paths;
	int seen = 0;
	for (size_t i = 0; paths && i < ap->npaths && !seen; i++)
		seen = strcmp(ap->paths[i], path) == 0;
	char *copy = seen ? NULL : strdup(path);
	if (!np || !paths || (!seen && !copy))
		return -ENOMEM;
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
	struct probed pr = {pid, f, 0, {0}, {0}, 0, {0}};
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
	int got = alloc_bpf_attach(&ap->bpf, fdpath, pr.offsets, kinds, pr.n, pid, pr.fds);
	if (got < 0)
		return got;
	pr.nfds = (size_t)got;
	int err = remember(ap, &pr, path);
	if (err) {
		close_fds(&pr);
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
	/* Sampled from now on, every function in. */
	if (total && (err = alloc_bpf_arm(&ap->bpf, pid, 1)) < 0)
		return err;
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

	/* After alloc_probes_detach() the probes are gone and what was
	 * probed stays known. */
	if (ap->detached)
		return;
	(void)alloc_bpf_arm(&ap->bpf, pid, 0); /* a pid the kernel may give again */
	for (size_t i = 0; i < ap->nprobed; i++) {
		if (ap->probed[i].pid == pid) {
			close_fds(&ap->probed[i]);
			continue;
		}
		ap->probed[j++] = ap->probed[i];
	}
	ap->nprobed = j;
}

void alloc_probes_detach(struct alloc_probes *ap)
{
	ap->detached = 1;
	/* No process sampled any more, then the probes out: taken out one
	 * after another, those left would be sampled alone meanwhile. */
	for (size_t i = 0; i < ap->nprobed; i++)
		(void)alloc_bpf_arm(&ap->bpf, ap->probed[i].pid, 0);
	for (size_t i = 0; i < ap->nprobed; i++)
		close_fds(&ap->probed[i]);
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
	free(ap);
}
