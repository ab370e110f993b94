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

/* Loads the program with the maps in place of its own, for links of
 * attach_type. */
static int load(struct alloc_bpf *b, uint32_t attach_type, char *log, size_t log_len)
{
	struct alloc_prog *skel = alloc_prog__open();
	if (!skel)
		return -errno;
	struct bpf_map_fd maps[] = {{skel->maps.out, b->out_fd},
				    {skel->maps.left, b->left_fd},
				    {skel->maps.draws, b->table_fd},
				    {skel->maps.pending, b->pending_fd},
				    {skel->maps.live, b->live_fd},
				    {skel->maps.tail, b->tail_fd}};
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

int alloc_bpf_new(struct alloc_bpf *b, uint64_t interval, size_t ncpus, int no_sessions, char *log,
		  size_t log_len)
{
	memset(b, 0, sizeof(*b));
	b->prog_fd = b->out_fd = b->left_fd = b->table_fd = b->pending_fd = b->live_fd = -1;
	b->tail_fd = -1;
	if (!interval || !ncpus)
		return -EINVAL;
	int err;
	b->out_fd = ubpf_map_new(ncpus);
	b->left_fd = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, "recce_left");
	b->table_fd = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, ALLOC_DRAWS, "recce_draws");
	b->pending_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 24, PENDING_MAX, "recce_pending");
	b->live_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 8, ALLOC_BPF_LIVE_MAX, "recce_live");
	b->tail_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 8, 16, PENDING_MAX, "recce_tail");
	int fds[] = {b->out_fd, b->left_fd, b->table_fd, b->pending_fd, b->live_fd, b->tail_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] < 0) {
			err = fds[i];
			goto fail;
		}
	if ((err = fill_state(b, interval)) < 0)
		goto fail;
	/* Sessions where the kernel has them (it refuses the attach type
	 * where not); else an entry and a return link. */
	b->sessions = !no_sessions;
	err = b->sessions ? load(b, UBPF_ATTACH_SESSION, log, log_len) : -EINVAL;
	if (err == -EINVAL) {
		b->sessions = 0;
		err = load(b, UBPF_ATTACH_MULTI, log, log_len);
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

int alloc_bpf_attach(struct alloc_bpf *b, const char *path, const uint64_t *offsets,
		     const uint16_t *kinds, size_t n, pid_t pid, int links[2])
{
	int fd = -ENOMEM;

	links[0] = links[1] = -1;
	/* Without sessions, the return link first: a call the entry link
	 * samples always has its return seen (one whose return went unseen
	 * would leave its thread a pending call, unsampled from then on).
	 * Returns of calls no entry sampled are left alone. */
	if (!b->sessions && (fd = return_link(b, path, offsets, kinds, n, pid)) < 0)
		return fd == -EINVAL ? -EOPNOTSUPP : fd;
	links[1] = b->sessions ? -1 : fd;
	uint64_t *cookies = calloc(n ? n : 1, sizeof(*cookies));
	for (size_t i = 0; cookies && i < n; i++)
		cookies[i] = kinds[i] | (b->sessions ? 0 : ALLOC_FN_RETURNS);
	fd = !cookies ? -ENOMEM
		      : ubpf_link_new(b->prog_fd, path, offsets, NULL, cookies, n,
				      b->sessions ? UBPF_LINK_SESSION : UBPF_LINK_ENTRY, pid);
	free(cookies);
	/* A kernel before 6.13 may load a program for sessions and refuse
	 * only its link: at the first link, the program again for the two
	 * links. */
	if (fd == -EINVAL && b->sessions && !b->linked) {
		close(b->prog_fd);
		b->prog_fd = -1;
		b->sessions = 0;
		int err = load(b, UBPF_ATTACH_MULTI, NULL, 0);
		if (err)
			return err == -EINVAL ? -EOPNOTSUPP : err;
		return alloc_bpf_attach(b, path, offsets, kinds, n, pid, links);
	}
	if (fd < 0) {
		if (links[1] >= 0)
			close(links[1]);
		links[1] = -1;
		return fd == -EINVAL ? -EOPNOTSUPP : fd;
	}
	links[0] = fd;
	b->linked = 1;
	return 0;
}

void alloc_bpf_release(struct alloc_bpf *b)
{
	int *fds[] = {&b->prog_fd,    &b->out_fd,  &b->left_fd, &b->table_fd,
		      &b->pending_fd, &b->live_fd, &b->tail_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
