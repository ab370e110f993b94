/*
 * The Python frame program's maps, ring and loading (see py-bpf.h). The
 * program is BPF C (bpf/py.bpf.c), embedded as a libbpf skeleton; the
 * maps are made here and put in place of the program's own before
 * loading, and the ring is read through libbpf's ring buffer.
 */
#include "perf/py-bpf.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/bpf/py.skel.h"

static int load(struct py_bpf *b, int family_fd, char *log, size_t log_len)
{
	struct py_prog *skel = py_prog__open();
	if (!skel)
		return -errno;
	skel->rodata->family_only = family_fd >= 0;
	struct bpf_map_fd maps[] = {
	    {skel->maps.layouts, b->layouts_fd}, {skel->maps.tstates, b->tstates_fd},
	    {skel->maps.scratch, b->scratch_fd}, {skel->maps.drops, b->drops_fd},
	    {skel->maps.out, b->out_fd},	 {skel->maps.family, family_fd}};
	size_t n = sizeof(maps) / sizeof(maps[0]) - (family_fd < 0);
	int err =
	    bpf_object_load_quietly(skel->obj, maps, n, skel->progs.recce_py, 0, log, log_len);
	if (!err) {
		b->prog_fd = bpf_program_dup(skel->progs.recce_py);
		err = b->prog_fd < 0 ? b->prog_fd : 0;
	}
	py_prog__destroy(skel);
	return err;
}

static int take(void *ctx, void *data, size_t size)
{
	struct py_bpf *b = ctx;
	const struct py_bpf_record *rec = data;

	/* The program writes at least the header, and frames to n. */
	if (size >= sizeof(*rec) - sizeof(rec->frames) &&
	    rec->n <= (size - (sizeof(*rec) - sizeof(rec->frames))) / sizeof(rec->frames[0]))
		b->fn(rec, size, b->arg);
	return 0;
}

int py_bpf_new(struct py_bpf *b, py_bpf_fn fn, void *arg, int family_fd, char *log, size_t log_len)
{
	memset(b, 0, sizeof(*b));
	b->prog_fd = b->layouts_fd = b->tstates_fd = b->scratch_fd = b->drops_fd = b->out_fd = -1;
	b->fn = fn;
	b->arg = arg;
	b->layouts_fd = bpf_map_new(BPF_MAP_TYPE_HASH, 4, sizeof(struct py_bpf_layout),
				    PY_BPF_PROCS, "recce_py_procs");
	b->tstates_fd = bpf_map_new(BPF_MAP_TYPE_LRU_HASH, 4, 8, PY_BPF_TIDS, "recce_py_ts");
	b->scratch_fd = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct py_bpf_record), 1,
				    "recce_py_rec");
	b->drops_fd = bpf_map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, "recce_py_drops");
	b->out_fd = bpf_map_new(BPF_MAP_TYPE_RINGBUF, 0, 0, PY_BPF_RING_BYTES, "recce_py_out");
	int fds[] = {b->layouts_fd, b->tstates_fd, b->scratch_fd, b->drops_fd, b->out_fd};
	int err = 0;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]) && !err; i++)
		if (fds[i] < 0)
			err = fds[i];
	if (!err)
		err = load(b, family_fd, log, log_len);
	if (!err) {
		b->ring = ring_buffer__new(b->out_fd, take, b, NULL);
		if (!b->ring)
			err = errno ? -errno : -ENOMEM;
	}
	if (err)
		py_bpf_release(b);
	return err;
}

int py_bpf_set_process(struct py_bpf *b, pid_t pid, const struct py_bpf_layout *L)
{
	uint32_t key = (uint32_t)pid;

	if (!L) {
		int err = bpf_map_delete(b->layouts_fd, &key);
		return err == -ENOENT ? 0 : err;
	}
	return bpf_map_set(b->layouts_fd, &key, L);
}

int py_bpf_read(struct py_bpf *b)
{
	return ring_buffer__consume(b->ring);
}

uint64_t py_bpf_dropped(const struct py_bpf *b)
{
	long ncpus = libbpf_num_possible_cpus();
	uint32_t zero = 0;

	if (ncpus <= 0)
		return 0;
	uint64_t *v = calloc((size_t)ncpus, sizeof(*v)), sum = 0;
	if (v && bpf_map_get(b->drops_fd, &zero, v) == 0)
		for (long i = 0; i < ncpus; i++)
			sum += v[i];
	free(v);
	return sum;
}

void py_bpf_release(struct py_bpf *b)
{
	int *fds[] = {&b->prog_fd,    &b->layouts_fd, &b->tstates_fd,
		      &b->scratch_fd, &b->drops_fd,   &b->out_fd};

	ring_buffer__free(b->ring);
	b->ring = NULL;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
