/*
 * The BPF programs and uprobe_multi links of call tracing (see
 * uprobe-bpf.h). The programs are BPF C (bpf/hits.bpf.c, built twice, and
 * bpf/fork.bpf.c),
 * embedded as libbpf skeletons; the maps are made here, and put in place
 * of the programs' own before loading, so that the caller owns them. The
 * links are bpf(2) calls of their own: libbpf 1.1 makes no uprobe_multi
 * links, and the few fields of them, newer than some systems' headers,
 * are declared here from the kernel's ABI.
 */
#include "perf/uprobe-bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/perf-sys.h"
#include "perf/bpf/fork.skel.h"
#include "perf/bpf/hits-py.skel.h"
#include "perf/bpf/hits.skel.h"
#include "perf/py-format.h"

#define UPROBE_MULTI_RETURN (1U << 0) /* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr for BPF_LINK_CREATE of an uprobe_multi link, padded to
 * the size the kernel reads; unknown trailing bytes must be zero. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
	uint64_t rest[8];
};

int ubpf_map_new(size_t n)
{
	return bpf_map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, (uint32_t)n, "recce_hits");
}

int ubpf_map_set(int map_fd, int cpu, int event_fd)
{
	uint32_t key = (uint32_t)cpu, value = (uint32_t)event_fd;

	return bpf_map_set(map_fd, &key, &value);
}

int ubpf_family_new(size_t n)
{
	return bpf_map_new(BPF_MAP_TYPE_HASH, 4, 4, (uint32_t)n, "recce_family");
}

int ubpf_drops_new(void)
{
	return bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 1, "recce_drops");
}

int ubpf_copy_new(uint32_t bytes)
{
	uint32_t zero = 0;
	int fd = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 4, 1, "recce_copy");

	if (fd >= 0 && bpf_map_set(fd, &zero, &bytes) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The maps put in place of the program's: those given (fd >= 0). */
static size_t given_maps(struct bpf_map_fd *out, const struct bpf_map_fd *maps, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (maps[i].fd >= 0)
			out[k++] = maps[i];
	return k;
}

int ubpf_py_layouts_new(void)
{
	return bpf_map_new(BPF_MAP_TYPE_HASH, 4, sizeof(struct py_bpf_layout), PY_BPF_PROCS,
			   "recce_py_procs");
}

/* The settings both builds of the program take (their read-only data
 * has the same fields). */
#define SETTINGS(skel, chain, bytes, family)                                                       \
	do {                                                                                       \
		(skel)->rodata->callchain = (chain) != 0;                                          \
		(skel)->rodata->stack_bytes = (chain) ? (bytes) & ~7u : 0;                         \
		(skel)->rodata->family_only = (family) >= 0;                                       \
	} while (0)

/* The build with Python frames (hits-py.bpf.o), its layouts from
 * py_layouts_fd; its own map of thread states, sized for many threads. */
static int py_prog_new(int map_fd, int drops_fd, int copy_fd, int family_fd, uint32_t stack_bytes,
		       int py_layouts_fd, int for_links, char *log, size_t log_len)
{
	struct hits_py_prog *skel = hits_py_prog__open();
	if (!skel)
		return -errno;
	SETTINGS(skel, 1, stack_bytes, family_fd);
	int err = bpf_map__set_max_entries(skel->maps.tstates, PY_BPF_TIDS);
	struct bpf_map_fd maps[] = {{skel->maps.hits, map_fd},
				    {skel->maps.drops, drops_fd},
				    {skel->maps.layouts, py_layouts_fd},
				    {skel->maps.copy, copy_fd},
				    {skel->maps.family, family_fd}},
			  given[5];
	if (!err)
		err = bpf_object_load_quietly(skel->obj, given, given_maps(given, maps, 5),
					      skel->progs.recce_hit,
					      for_links ? UBPF_ATTACH_MULTI : 0, log, log_len);
	int fd = err ? err : bpf_program_dup(skel->progs.recce_hit);
	hits_py_prog__destroy(skel);
	return fd;
}

int ubpf_prog_new(int map_fd, int drops_fd, int copy_fd, int family_fd, int callchain,
		  uint32_t stack_bytes, int py_layouts_fd, int for_links, char *log, size_t log_len)
{
	if (callchain && py_layouts_fd >= 0)
		return py_prog_new(map_fd, drops_fd, copy_fd, family_fd, stack_bytes, py_layouts_fd,
				   for_links, log, log_len);
	struct hits_prog *skel = hits_prog__open();
	if (!skel)
		return -errno;
	SETTINGS(skel, callchain, stack_bytes, family_fd);
	struct bpf_map_fd maps[] = {{skel->maps.hits, map_fd},
				    {skel->maps.drops, drops_fd},
				    {skel->maps.copy, copy_fd},
				    {skel->maps.family, family_fd}},
			  given[4];
	int err = bpf_object_load_quietly(skel->obj, given, given_maps(given, maps, 4),
					  skel->progs.recce_hit, for_links ? UBPF_ATTACH_MULTI : 0,
					  log, log_len);
	int fd = err ? err : bpf_program_dup(skel->progs.recce_hit);
	hits_prog__destroy(skel);
	return fd;
}

int ubpf_link_new(int prog_fd, const char *path, const uint64_t *offsets,
		  const uint64_t *ref_ctr_offsets, const uint64_t *cookies, size_t n, int mode, pid_t pid)
{
	struct link_create_uprobe_multi a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = mode == UBPF_LINK_SESSION ? UBPF_ATTACH_SESSION : UBPF_ATTACH_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctr_offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.multi_flags = mode == UBPF_LINK_RETURN ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	return bpf_sys(BPF_LINK_CREATE, &a, sizeof(a));
}

int ubpf_event_link_new(int prog_fd, int event_fd, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
	int fd = bpf_link_create(prog_fd, event_fd, BPF_PERF_EVENT, &opts);

	return fd < 0 ? (errno ? -errno : fd) : fd;
}

int ubpf_event_probe(int prog_fd, const char *path, uint64_t offset, int retprobe, pid_t pid,
		     uint64_t cookie, int fds[2])
{
	uint32_t type;
	int bit;
	struct perf_event_attr attr;

	fds[0] = fds[1] = -1;
	if (perf_uprobe_pmu(&type, &bit) < 0)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.sample_period = 1;
	attr.config = retprobe ? 1ULL << bit : 0;
	attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	attr.config2 = offset;			  /* probe_offset */
	fds[0] = perf_event_open_fd(&attr, pid, -1);
	if (fds[0] < 0)
		return errno == EPERM ? -EACCES : -errno;
	fds[1] = ubpf_event_link_new(prog_fd, fds[0], cookie);
	if (fds[1] < 0) {
		int err = fds[1];
		close(fds[0]);
		fds[0] = fds[1] = -1;
		return err;
	}
	return 0;
}

int ubpf_follow_forks(int family_fd, char *log, size_t log_len)
{
	struct fork_prog *skel = fork_prog__open();
	if (!skel)
		return -errno;
	struct bpf_map_fd family = {skel->maps.family, family_fd};
	int err =
	    bpf_object_load_quietly(skel->obj, &family, 1, skel->progs.recce_fork, 0, log, log_len);
	int fd = err ? err
		     : bpf_raw_tracepoint_open("sched_process_fork",
					       bpf_program__fd(skel->progs.recce_fork));
	fork_prog__destroy(skel); /* the tracepoint holds the program */
	return fd;
}
