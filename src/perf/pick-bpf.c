/*
 * The family, fork follower and program of per-CPU sampling of chosen
 * processes (see pick-bpf.h). The program is BPF C (bpf/pick.bpf.c),
 * embedded as a libbpf skeleton; the family map and the fork follower
 * are call tracing's (uprobe-bpf.h).
 */
#include "perf/pick-bpf.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/bpf/pick.skel.h"
#include "perf/uprobe-bpf.h"

static int load(struct pick_bpf *p, char *log, size_t log_len)
{
	struct pick_prog *skel = pick_prog__open();
	if (!skel)
		return -errno;
	struct bpf_map_fd family = {skel->maps.family, p->family_fd};
	int err =
	    bpf_object_load_quietly(skel->obj, &family, 1, skel->progs.recce_pick, 0, log, log_len);
	if (!err) {
		p->prog_fd = bpf_program_dup(skel->progs.recce_pick);
		err = p->prog_fd < 0 ? p->prog_fd : 0;
	}
	pick_prog__destroy(skel);
	return err;
}

int pick_bpf_new(struct pick_bpf *p, char *log, size_t log_len)
{
	p->fork_fd = p->prog_fd = -1;
	p->family_fd = ubpf_family_new(PICK_BPF_PROCS);
	int err = p->family_fd < 0 ? p->family_fd : 0;
	if (!err) {
		p->fork_fd = ubpf_follow_forks(p->family_fd, log, log_len);
		err = p->fork_fd < 0 ? p->fork_fd : 0;
	}
	if (!err)
		err = load(p, log, log_len);
	if (err)
		pick_bpf_release(p);
	return err;
}

int pick_bpf_add(struct pick_bpf *p, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;

	return bpf_map_set(p->family_fd, &key, &one);
}

void pick_bpf_release(struct pick_bpf *p)
{
	int *fds[] = {&p->family_fd, &p->fork_fd, &p->prog_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
