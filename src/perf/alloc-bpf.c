/*
 * The allocation sampling program's maps and its loading (see
 * alloc-bpf.h). The program is BPF C (bpf/alloc.bpf.c), embedded as a
 * libbpf skeleton; the maps are made and filled here, and put in place of
 * the program's own before loading.
 */
#include "perf/alloc-bpf.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/bpf/alloc.skel.h"
#include "perf/uprobe-bpf.h"

#define PENDING_MAX 4096 /* threads inside a sampled call at once */

/* The number of possible CPUs, which sizes per-CPU map values. */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int max = -1, a, b;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' && fscanf(f, "%d", &b) == 1)
			(void)fscanf(f, "%c", &sep);
		if (b > max)
			max = b;
	}
	fclose(f);
	return max >= 0 ? max + 1 : -EINVAL;
}

/* Fills the table of countdowns and starts every CPU's countdown. */
static int fill_state(struct alloc_bpf *b, uint64_t interval)
{
	uint64_t table[ALLOC_DRAWS];

	for (uint32_t i = 0; i < ALLOC_DRAWS; i++) {
		table[i] = (uint64_t)(-(double)interval * log(1.0 - (i + 0.5) / ALLOC_DRAWS));
		if (!table[i])
			table[i] = 1;
		int err = bpf_map_set(b->table_fd, &i, &table[i]);
		if (err)
			return err;
	}
	int ncpus = possible_cpus();
	if (ncpus < 0)
		return ncpus;
	uint64_t *left = calloc((size_t)ncpus, sizeof(*left));
	if (!left)
		return -ENOMEM;
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	for (int c = 0; c < ncpus; c++)
		left[c] = table[rand_r(&seed) % ALLOC_DRAWS];
	uint32_t zero = 0;
	int err = bpf_map_set(b->left_fd, &zero, left);
	free(left);
	return err;
}

/* The attach type the program is loaded for, by enum alloc_bpf_mode:
 * perf events need none. */
static const uint32_t mode_attach_type[] = {0, UBPF_ATTACH_MULTI, UBPF_ATTACH_SESSION};

/* Loads the program with the maps in place of its own, for links of
 * attach_type. */
static int load(struct alloc_bpf *b, uint32_t attach_type, char *log, size_t log_len)
{
	struct alloc_prog *skel = alloc_prog__open();
	if (!skel)
		return -errno;
	struct bpf_map_fd maps[] = {
	    {skel->maps.out, b->out_fd},     {skel->maps.left, b->left_fd},
	    {skel->maps.draws, b->table_fd}, {skel->maps.pending, b->pending_fd},
	    {skel->maps.live, b->live_fd},   {skel->maps.tail, b->tail_fd},
	    {skel->maps.armed, b->armed_fd}};
	int err =
	    bpf_object_load_quietly(skel->obj, maps, sizeof(maps) / sizeof(maps[0]),
				    skel->progs.recce_alloc, attach_type, log, log_len);
	if (!err) {
		b->prog_fd = bpf_program_dup(skel->progs.recce_alloc);
		err = b->prog_fd < 0 ? b->prog_fd : 0;
	}
	alloc_prog__destroy(skel);
	return err;
}

int alloc_bpf_new(struct alloc_bpf *b, uint64_t interval, size_t ncpus, enum alloc_bpf_mode newest,
		  char *log, size_t log_len)
{
	memset(b, 0, sizeof(*b));
	b->prog_fd = b->out_fd = b->left_fd = b->table_fd = b->pending_fd = b->live_fd = -1;
	b->tail_fd = b->armed_fd = -1;
	if (!interval || !ncpus)
		return -EINVAL;
	int err;
	b->out_fd = ubpf_map_new(ncpus);
	b->left_fd = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, "recce_left");
	b->table_fd = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, ALLOC_DRAWS, "recce_draws");
	b->pending_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 24, PENDING_MAX, "recce_pending");
	b->live_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, ALLOC_BPF_LIVE_MAX, "recce_live");
	b->tail_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 16, PENDING_MAX, "recce_tail");
	b->armed_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 4, 4, ALLOC_BPF_PROCS_MAX, "recce_armed");
	int fds[] = {b->out_fd,	 b->left_fd, b->table_fd, b->pending_fd,
		     b->live_fd, b->tail_fd, b->armed_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] < 0) {
			err = fds[i];
			goto fail;
		}
	if ((err = fill_state(b, interval)) < 0)
		goto fail;
	/* The newest mode whose attach type the kernel knows (it refuses an
	 * unknown one); perf events need none. */
	for (b->mode = newest;; b->mode--) {
		err = load(b, mode_attach_type[b->mode], log, log_len);
		if (err != -EINVAL || b->mode == ALLOC_BPF_EVENTS)
			break;
	}
	if (err)
		goto fail;
	return 0;
fail:
	alloc_bpf_release(b);
	return err;
}

int alloc_bpf_set_output(struct alloc_bpf *b, int cpu, int event_fd)
{
	return ubpf_map_set(b->out_fd, cpu, event_fd);
}

/* Without sessions: the return link of the allocation functions (not of
 * the frees: nothing is learnt at their returns). Its descriptor or
 * -errno. */
static int return_link(const struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		       const uint16_t *kinds, size_t n, pid_t pid)
{
	uint64_t *at = calloc(n ? n : 1, sizeof(*at)), *cookies = calloc(n ? n : 1, sizeof(*at));
	size_t m = 0;
	int fd = -ENOMEM;

	for (size_t i = 0; at && cookies && i < n; i++)
		if ((kinds[i] & 0xff) != ALLOC_FN_FREE) {
			at[m] = offsets[i];
			cookies[m++] = kinds[i] | ALLOC_FN_AT_RETURN;
		}
	if (at && cookies)
		fd = ubpf_link_new(b->prog_fd, path, at, NULL, cookies, m, UBPF_LINK_RETURN, pid);
	free(at);
	free(cookies);
	return fd;
}

/* Perf uprobe events: one at the return of each allocation function,
 * then one at each function's entry (a call the entry samples always has
 * its return seen). fds end up in the order to close them: the entries'
 * events and links, then the returns'. */
static int attach_events(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
			 const uint16_t *kinds, size_t n, pid_t pid, int *fds)
{
	size_t entries = 0, returns = 2 * n;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++)
		if ((kinds[i] & 0xff) != ALLOC_FN_FREE &&
		    !(err = ubpf_event_probe(b->prog_fd, path, offsets[i], 1, pid,
					     kinds[i] | ALLOC_FN_AT_RETURN, fds + returns)))
			returns += 2;
	for (size_t i = 0; !err && i < n; i++)
		if (!(err = ubpf_event_probe(b->prog_fd, path, offsets[i], 0, pid,
					     kinds[i] | ALLOC_FN_RETURNS, fds + entries)))
			entries += 2;
	if (err) {
		for (size_t i = 0; i < entries; i++)
			close(fds[i]);
		for (size_t i = 2 * n; i < returns; i++)
			close(fds[i]);
		return err == -EINVAL || err == -ENOENT ? -EOPNOTSUPP : err;
	}
	b->linked = 1;
	return (int)returns;
}

/* The session or entry link of the n functions: its descriptor or -errno. */
static int entry_link(const struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		      const uint16_t *kinds, size_t n, pid_t pid)
{
	uint64_t *cookies = calloc(n ? n : 1, sizeof(*cookies));
	int sessions = b->mode == ALLOC_BPF_SESSIONS, fd = -ENOMEM;

	for (size_t i = 0; cookies && i < n; i++)
		cookies[i] = kinds[i] | (sessions ? 0 : ALLOC_FN_RETURNS);
	if (cookies)
		fd = ubpf_link_new(b->prog_fd, path, offsets, NULL, cookies, n,
				   sessions ? UBPF_LINK_SESSION : UBPF_LINK_ENTRY, pid);
	free(cookies);
	return fd;
}

int alloc_bpf_attach(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		     const uint16_t *kinds, size_t n, pid_t pid, int *fds)
{
	if (b->mode == ALLOC_BPF_EVENTS)
		return attach_events(b, path, offsets, kinds, n, pid, fds);
	/* Without sessions, the return link first: a call the entry link
	 * samples always has its return seen (one whose return went unseen
	 * would leave its thread a pending call, unsampled from then on).
	 * Returns of calls no entry sampled are left alone. */
	int ret = b->mode == ALLOC_BPF_LINKS ? return_link(b, path, offsets, kinds, n, pid) : 0;
	int fd = ret < 0 ? ret : entry_link(b, path, offsets, kinds, n, pid);
	/* A kernel may load a program for an attach type it then refuses to
	 * link (sessions before 6.13, uprobe_multi before 6.6): at the first
	 * link, the program again for the next older mode. */
	if (fd == -EINVAL && !b->linked) {
		if (b->mode == ALLOC_BPF_LINKS && ret >= 0)
			close(ret);
		close(b->prog_fd);
		b->prog_fd = -1;
		b->mode--;
		int err = load(b, mode_attach_type[b->mode], NULL, 0);
		if (err)
			return err == -EINVAL ? -EOPNOTSUPP : err;
		return alloc_bpf_attach(b, path, offsets, kinds, n, pid, fds);
	}
	if (fd < 0) {
		if (b->mode == ALLOC_BPF_LINKS && ret >= 0)
			close(ret);
		return fd == -EINVAL ? -EOPNOTSUPP : fd;
	}
	fds[0] = fd;
	b->linked = 1;
	if (b->mode != ALLOC_BPF_LINKS)
		return 1;
	fds[1] = ret;
	return 2;
}

int alloc_bpf_arm(struct alloc_bpf *b, pid_t pid, int armed)
{
	uint32_t key = (uint32_t)pid, one = 1;

	if (armed)
		return bpf_map_set(b->armed_fd, &key, &one);
	int err = bpf_map_delete(b->armed_fd, &key);
	return err == -ENOENT ? 0 : err;
}

void alloc_bpf_release(struct alloc_bpf *b)
{
	int *fds[] = {&b->prog_fd,    &b->out_fd,  &b->left_fd, &b->table_fd,
		      &b->pending_fd, &b->live_fd, &b->tail_fd, &b->armed_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
