/*
 * Following the processes and threads a traced process creates (see
 * uprobe.h): a thread or process the kernel reports gets the probes of
 * its family, at once in event mode, through the family map in link mode
 * (a fork tracepoint adds a child before it runs; what it reports late is
 * counted); and a thread that ended is forgotten.
 */
#include "perf/uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/perf-ring.h"
#include "perf/uprobe-bpf.h"
#include "perf/uprobe-internal.h"
#include "util/clock.h"
#include "util/lines.h"

/* Whether process pid is there and not a zombie. */
static int process_running(pid_t pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "PID (COMM) STATE ...": the name may hold anything but the last ')'. */
	char *end = strrchr(buf, ')');
	return end && end[1] == ' ' && end[2] && end[2] != 'Z' && end[2] != 'X';
}

/*
 * A thread or process created while tracing (a PERF_RECORD_FORK). In link
 * mode, and in event mode with the BPF program, a new thread is traced
 * already (links and events are per process) and a new process gets links
 * or events of its own; in event mode without it every probe is opened on
 * the new thread. Best effort: a task that already exited has nothing to
 * trace.
 */
void uprobe_follow_task(struct uprobe_set *u, pid_t pid, pid_t ppid, pid_t tid)
{
	uint64_t state;
	int known = u64map_get(&u->tids, (uint64_t)tid, &state);

	if (u->removed || (known && state == TID_PROBED))
		return;
	if (known && state == TID_GONE && u->family_fd >= 0 && pid != ppid && tid == pid &&
	    !process_running(pid)) {
		/* Its exit was read before its fork (the two on different
		 * CPUs' rings): the fork tracepoint made it a member, and it
		 * left. It is not to join again, nor be called late. */
		u->stats.followed++;
		return;
	}
	if (!u->links && !uprobe_within_budget(u, 1) && !(u->bpf && tid != pid)) {
		/* Over max_events: left untraced, and holding no event. */
		u->stats.unfollowed += u->nprobes;
		u64map_put(&u->tids, (uint64_t)tid, TID_GONE);
		return;
	}
	if (u64map_put(&u->tids, (uint64_t)tid, TID_PROBED) < 0)
		return;
	if (u->family_fd >= 0) {
		/* The fork tracepoint makes it a member before it runs, when
		 * its parent is one; but the kernel writes this record first,
		 * so a child read of at once may not be in yet while its parent
		 * is (or was, until it ended). Failing that (the family full,
		 * a parent that was not a member), it is one from now. */
		uint32_t key = (uint32_t)pid, pkey = (uint32_t)ppid, one = 1, v;
		uint64_t pstate;
		if (pid != ppid && tid == pid) {
			int parent_in =
			    bpf_map_get(u->family_fd, &pkey, &v) == 0 ||
			    (u64map_get(&u->tids, (uint64_t)ppid, &pstate) && pstate == TID_GONE);
			if (bpf_map_get(u->family_fd, &key, &v) == 0)
				u->stats.followed++;
			else if (bpf_map_set(u->family_fd, &key, &one) != 0)
				u->stats.unfollowed++;
			else if (parent_in)
				u->stats.followed++;
			else
				u->stats.followed_late++;
		}
		return;
	}
	if (u->links || u->bpf) {
		if (pid != ppid && tid == pid) {
			int rc = u->links ? uprobe_attach_links(u, pid)
					  : uprobe_attach_process_events(u, pid, NULL, 0);
			if (rc == 0 || rc == -ESRCH) /* ... or gone already */
				u->stats.followed_late++;
			else
				u->stats.unfollowed++;
		}
		return;
	}
	u->nevents += uprobe_events_for(u, 1);
	int failed = 0;
	for (size_t i = 0; i < u->nprobes; i++)
		if (uprobe_open_probe(u, i, tid) < 0) {
			u->stats.unfollowed++;
			failed = 1;
		}
	if (pid != ppid && tid == pid && !failed)
		u->stats.followed_late++;
	else if (tid != pid)
		u->stats.late_until_ns = time_now_ns(CLOCK_MONOTONIC);
}

/* Whether process pid has a live thread (its "Threads:" line above 0 and,
 * once its first thread is gone, above 1). */
static int process_has_threads(pid_t pid)
{
	char path[64];
	uint64_t threads;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return lines_key_numbers(path, "Threads", &threads, 1) == 1 && threads > 1;
}

/* Closes the events of a thread that exited, so that a target that keeps
 * creating threads does not run recce out of descriptors. A process's
 * links stay: its other threads may run on. */
void uprobe_forget_thread(struct uprobe_set *u, pid_t pid, pid_t tid)
{
	size_t j = 0;
	uint64_t state;

	/* A process of the family that ended leaves it, so that its id can
	 * be reused by another process; the first thread outliving it is
	 * rare and its process stays. */
	if (u->family_fd >= 0 && pid == tid && !process_has_threads(pid)) {
		uint32_t key = (uint32_t)pid;
		bpf_map_delete(u->family_fd, &key);
		/* Its fork may not be read yet: uprobe_follow_task() is to know. */
		u64map_put(&u->tids, (uint64_t)tid, TID_GONE);
	}

	if (u->removed || !u64map_get(&u->tids, (uint64_t)tid, &state))
		return;
	if (state == TID_PROBED && !u->links && (!u->bpf || pid == tid) &&
	    u->nevents >= uprobe_events_for(u, 1))
		u->nevents -= uprobe_events_for(u, 1);
	u64map_put(&u->tids, (uint64_t)tid, TID_GONE);
	for (size_t i = 0; i < u->nfds; i++) {
		if (u->fds[i].tid == tid && !u->fds[i].link)
			close(u->fds[i].fd);
		else
			u->fds[j++] = u->fds[i];
	}
	u->nfds = j;
}

/* Following forks: pid joins the family, and the links (of every
 * process, the program keeping the family's hits) are made on the first
 * attach. */
int uprobe_family_attach(struct uprobe_set *u, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;
	int err = bpf_map_set(u->family_fd, &key, &one);

	if (!err && !u->family_linked) {
		err = uprobe_attach_links(u, 0);
		u->family_linked = !err;
	}
	if (err)
		bpf_map_delete(u->family_fd, &key);
	return err;
}

int uprobe_set_follow_forks(struct uprobe_set *u)
{
	if (!u->links || u->attached)
		return -EOPNOTSUPP;
	if (u->family_fd >= 0)
		return 0;
	int family = ubpf_family_new(FAMILY_MAX);
	if (family < 0)
		return family;
	int prog = ubpf_prog_new(u->map_fd, u->drops_fd, u->copy_fd, family, u->cfg.callchain,
				 u->cfg.stack_bytes, u->py_layouts_fd, 1, NULL, 0);
	if (prog < 0) {
		close(family);
		return prog;
	}
	int fork = ubpf_follow_forks(family, NULL, 0);
	if (fork < 0) {
		close(prog);
		close(family);
		return fork;
	}
	close(u->prog_fd);
	u->prog_fd = prog;
	u->family_fd = family;
	u->fork_fd = fork;
	return 0;
}
