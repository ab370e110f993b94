/*
 * Uprobes through the perf_event_open uprobe PMU (see uprobe.h). The
 * records of all CPU rings are merged by time so that a call is always seen
 * before its return, even when the thread moved to another CPU in between.
 *
 * Each CPU has two rings. The hits go to a "hit ring" that wakes the
 * reader only every cfg->wakeup_hits hits: a wakeup is an interrupt and a
 * context switch paid in the target's thread, several times the cost of
 * the probe itself, so waking on every hit would multiply what tracing
 * costs the target. The thread watchers' records (a thread created or
 * ended) go to a "task ring" that wakes the reader at once, because a new
 * thread's calls go unseen until its probes are open.
 */
#include "perf/uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/bpf-sys.h"
#include "perf/perf-ring.h"
#include "perf/perf-sys.h"
#include "perf/py-format.h"
#include "perf/uprobe-bpf.h"
#include "perf/uprobe-internal.h"
#include "util/array.h"
#include "util/lines.h"

static void attr_common(const struct uprobe_set *u, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->sample_type = u->sample_type;
	attr->sample_period = 1;
	attr->sample_regs_user = REGS_MASK;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->wakeup_events = (uint32_t)u->cfg.wakeup_hits;
	attr->exclude_callchain_kernel = 1;
	attr->sample_max_stack = UPROBE_MAX_CHAIN;
	if (u->sample_type & PERF_SAMPLE_STACK_USER)
		attr->sample_stack_user = u->cfg.stack_bytes ? u->cfg.stack_bytes : 8;
}

/* A dummy event: it never samples, it owns a ring or reports tasks. */
static void attr_dummy(const struct uprobe_set *u, struct perf_event_attr *attr)
{
	attr_common(u, attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->exclude_kernel = 1;
}

/* A hit ring wakes the reader by its hits' wakeup_events (or when half
 * full); a task ring, with a 1-byte watermark, for every record. In link
 * mode a hit ring belongs to the BPF output event the program writes to. */
static int ring_open(struct uprobe_set *u, struct perf_ring *r, int cpu, size_t pages, int task)
{
	struct perf_event_attr attr;

	attr_dummy(u, &attr);
	attr.wakeup_events = 0;
	if (task) {
		attr.watermark = 1;
		attr.wakeup_watermark = 1;
	} else if (u->bpf) {
		attr.config = PERF_COUNT_SW_BPF_OUTPUT;
		attr.sample_type = PERF_SAMPLE_RAW;
		attr.sample_period = 1;
		attr.wakeup_events = (uint32_t)u->cfg.wakeup_hits;
	}
	/* The program writes from the traced threads: its event must be
	 * active whatever runs on the CPU (pid -1), not only recce. */
	pid_t pid = !task && u->bpf ? -1 : 0;
	int fd = perf_event_open_fd(&attr, pid, cpu);
	if (fd < 0)
		return errno == EPERM ? -EACCES : -errno;
	return perf_ring_map(r, fd, pages, pages);
}

/*
 * Link mode needs a BPF map, the program and a kernel that makes uprobe_multi
 * links (6.6): the test link, on "/", fails with EBADF where links exist
 * (the path is not a regular file) and EINVAL where they do not.
 */
/* The program's map of rings (nmap CPUs), its count of drops, and the
 * program, loaded for links or for perf events: 0 or -errno. */
static int prog_open(struct uprobe_set *u, size_t nmap, int for_links)
{
	u->map_fd = ubpf_map_new(nmap);
	if (u->map_fd < 0)
		return u->map_fd;
	u->drops_fd = ubpf_drops_new();
	if (u->drops_fd < 0)
		return u->drops_fd;
	if (u->cfg.stack_bytes) {
		u->copy_fd = ubpf_copy_new(u->cfg.stack_bytes);
		if (u->copy_fd < 0)
			return u->copy_fd;
	}
	if (u->cfg.py_frames && u->cfg.callchain) {
		u->py_layouts_fd = ubpf_py_layouts_new();
		if (u->py_layouts_fd >= 0) {
			u->prog_fd =
			    ubpf_prog_new(u->map_fd, u->drops_fd, u->copy_fd, -1, 1,
					  u->cfg.stack_bytes, u->py_layouts_fd, for_links, NULL, 0);
			if (u->prog_fd >= 0)
				return 0;
			/* A kernel without a BPF loop: hits without Python frames. */
			close(u->py_layouts_fd);
			u->py_layouts_fd = -1;
		}
	}
	u->prog_fd = ubpf_prog_new(u->map_fd, u->drops_fd, u->copy_fd, -1, u->cfg.callchain,
				   u->cfg.stack_bytes, -1, for_links, NULL, 0);
	return u->prog_fd < 0 ? u->prog_fd : 0;
}

static int links_open(struct uprobe_set *u, size_t nmap)
{
	static const uint64_t zero = 0;
	int err = prog_open(u, nmap, 1);

	if (err)
		return err;
	int fd = ubpf_link_new(u->prog_fd, "/", &zero, NULL, &zero, 1, UBPF_LINK_ENTRY, getpid());
	if (fd >= 0)
		close(fd);
	return fd == -EBADF ? 0 : -EOPNOTSUPP;
}

/*
 * Without links, the same program on each perf uprobe event (a link of
 * the event with the probe's cookie, Linux 5.15). The test: a probe on
 * the first byte of recce's own executable, which no executable mapping
 * holds (so nothing is put in), with the program linked to it.
 */
static int event_bpf_open(struct uprobe_set *u, size_t nmap)
{
	int err = prog_open(u, nmap, 0);

	if (err)
		return err;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -EOPNOTSUPP;
	self[n] = 0;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = u->pmu_type;
	attr.sample_period = 1;
	attr.config1 = (uint64_t)(uintptr_t)self;
	int ev = perf_event_open_fd(&attr, getpid(), -1);
	if (ev < 0)
		return -EOPNOTSUPP;
	int fd = ubpf_event_link_new(u->prog_fd, ev, 0);
	if (fd >= 0)
		close(fd);
	close(ev);
	return fd >= 0 ? 0 : -EOPNOTSUPP;
}

static void links_close(struct uprobe_set *u)
{
	if (u->fork_fd >= 0)
		close(u->fork_fd);
	if (u->family_fd >= 0)
		close(u->family_fd);
	if (u->prog_fd >= 0)
		close(u->prog_fd);
	if (u->map_fd >= 0)
		close(u->map_fd);
	if (u->drops_fd >= 0)
		close(u->drops_fd);
	if (u->py_layouts_fd >= 0)
		close(u->py_layouts_fd);
	if (u->copy_fd >= 0)
		close(u->copy_fd);
	u->prog_fd = u->map_fd = u->family_fd = u->fork_fd = u->drops_fd = u->py_layouts_fd = -1;
	u->copy_fd = -1;
}

int uprobe_set_new(const struct uprobe_set_config *cfg, struct uprobe_set **out)
{
	struct uprobe_set *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	u->cfg = *cfg;
	u->map_fd = u->prog_fd = u->family_fd = u->fork_fd = u->drops_fd = u->py_layouts_fd = -1;
	u->copy_fd = -1;
	if (u->cfg.wakeup_hits == 0)
		u->cfg.wakeup_hits = 1;
	u->cfg.stack_bytes = !u->cfg.callchain			     ? 0
			     : u->cfg.stack_bytes > UPROBE_MAX_STACK ? UPROBE_MAX_STACK
								     : u->cfg.stack_bytes & ~7u;
	u64map_init(&u->ids);
	u64map_init(&u->tids);
	err = perf_cpus_online(&u->cpus, &u->ncpus);
	if (err)
		goto out_free;
	if (!u->cfg.no_bpf && !u->cfg.no_links &&
	    links_open(u, (size_t)u->cpus[u->ncpus - 1] + 1) == 0)
		u->links = u->bpf = 1;
	else
		links_close(u);
	err = perf_uprobe_pmu(&u->pmu_type, &u->retprobe_bit);
	if (err && !u->links)
		goto out_free;
	if (!u->links && !u->cfg.no_bpf) {
		if (event_bpf_open(u, (size_t)u->cpus[u->ncpus - 1] + 1) == 0)
			u->bpf = 1;
		else
			links_close(u);
	}
	u->sample_type =
	    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
	/* At a function's first instruction the caller has no frame of its
	 * own yet: the frame-pointer walk skips it, and only the return
	 * address at the stack pointer names it. 8 bytes of stack give it,
	 * or the stack_bytes asked for an unwind. */
	if (cfg->callchain)
		u->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
	u->rings = calloc(2 * u->ncpus, sizeof(*u->rings));
	u->slots = calloc(2 * u->ncpus, sizeof(*u->slots));
	if (!u->rings || !u->slots) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < 2 * u->ncpus; i++)
		perf_ring_init(&u->rings[i]);
	size_t pages = cfg->ring_pages ? cfg->ring_pages : DEFAULT_RING_PAGES;
	if (pages & (pages - 1)) {
		err = -EINVAL;
		goto out_free;
	}
	/* Task records are few and small: a task ring is an eighth of a
	 * hit ring, at least one page. */
	for (size_t i = 0; i < 2 * u->ncpus; i++) {
		int task = i >= u->ncpus;
		size_t n = task ? (pages >= 8 ? pages / 8 : 1) : pages;
		err = ring_open(u, &u->rings[i], u->cpus[i % u->ncpus], n, task);
		if (!err && u->bpf && !task)
			err = ubpf_map_set(u->map_fd, u->cpus[i], u->rings[i].fd);
		if (err)
			goto out_free;
	}
	*out = u;
	return 0;
out_free:
	uprobe_set_free(u);
	return err;
}

static void *close_link(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * Releasing a link takes its breakpoints out of the target at once and
 * then waits for a grace period (tens of milliseconds); an entry and a
 * return link of the same function share its breakpoint, which goes with
 * the later of the two. So the links are closed from threads of their
 * own, and the waits overlap: the target is back to full speed within the
 * kernel's own removal time, however many threads and CPUs it has.
 * (Should a thread not start, its link is closed here.)
 *
 * In event mode each close waits for that grace period under a lock the
 * kernel holds for every probe event, and a breakpoint stays until the
 * last event of its probe (one per thread and CPU) is closed: nothing
 * here can shorten that, and make bench measures it.
 */
void uprobe_set_remove_all(struct uprobe_set *u)
{
	pthread_t threads[64];
	size_t nthreads = 0;

	for (size_t i = 0; i < u->nfds; i++) {
		if (u->fds[i].link && nthreads < sizeof(threads) / sizeof(threads[0]) &&
		    pthread_create(&threads[nthreads], NULL, close_link,
				   (void *)(intptr_t)u->fds[i].fd) == 0)
			nthreads++;
		else
			close(u->fds[i].fd);
	}
	for (size_t t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	u->nfds = 0;
	u->removed = 1;
}

void uprobe_set_free(struct uprobe_set *u)
{
	if (!u)
		return;
	uprobe_set_remove_all(u);
	links_close(u);
	free(u->fds);
	if (u->rings)
		for (size_t i = 0; i < 2 * u->ncpus; i++)
			perf_ring_release(&u->rings[i]);
	free(u->rings);
	free(u->slots);
	for (size_t i = 0; i < u->nprobes; i++)
		free(u->probes[i].path);
	free(u->probes);
	free(u->cpus);
	u64map_release(&u->ids);
	u64map_release(&u->tids);
	free(u);
}

static int fds_push(struct uprobe_set *u, int fd, pid_t tid, int link)
{
	struct uprobe_fd *n = array_reserve(u->fds, &u->fds_cap, u->nfds + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	u->fds = n;
	u->fds[u->nfds++] = (struct uprobe_fd){fd, tid, link};
	return 0;
}

/* Closes the descriptors opened since the first `first`. */
static void fds_truncate(struct uprobe_set *u, size_t first)
{
	while (u->nfds > first)
		close(u->fds[--u->nfds].fd);
}

/* Opens attr on thread tid on every CPU into that CPU's ring (its task
 * ring when task is set, else its hit ring), recording each event's id
 * with value id_val unless id_val is UINT64_MAX. Returns 0, -ESRCH when
 * the thread has exited, or -errno (every descriptor it opened closed
 * again). */
static int open_on_cpus(struct uprobe_set *u, struct perf_event_attr *attr, pid_t tid,
			uint64_t id_val, int task)
{
	size_t first = u->nfds;
	int err;

	for (size_t c = 0; c < u->ncpus; c++) {
		int fd = perf_event_open_fd(attr, tid, u->cpus[c]);
		if (fd < 0) {
			err = errno == EPERM ? -EACCES : -errno;
			goto out_close;
		}
		uint64_t id;
		if (fds_push(u, fd, tid, 0) < 0) {
			close(fd);
			err = -ENOMEM;
			goto out_close;
		}
		errno = 0;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, u->rings[task ? u->ncpus + c : c].fd) <
			0 ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0 ||
		    (id_val != UINT64_MAX && u64map_put(&u->ids, id, id_val) < 0)) {
			err = errno ? -errno : -ENOMEM;
			goto out_close;
		}
	}
	return 0;
out_close:
	fds_truncate(u, first);
	return err;
}

/*
 * A probe event is never inherited: the kernel would set up the inherited
 * copy by reading uprobe_path again, from the memory of the thread that
 * calls clone(), where recce's pointer means nothing, and the target's
 * clone() would fail with EFAULT. Instead a dummy event with inherit and
 * task set watches each thread: its PERF_RECORD_FORK names every thread
 * and process the target creates, and the probes are opened on it then.
 */
static int open_watcher(struct uprobe_set *u, pid_t tid)
{
	struct perf_event_attr attr;

	attr_dummy(u, &attr);
	attr.inherit = 1;
	attr.task = 1;
	attr.sample_id_all = 1; /* the merge needs the records' times */
	return open_on_cpus(u, &attr, tid, UINT64_MAX, 1);
}

int uprobe_open_probe(struct uprobe_set *u, size_t probe, pid_t tid)
{
	const struct uprobe_probe *p = &u->probes[probe];
	struct perf_event_attr attr;

	attr_common(u, &attr);
	attr.type = u->pmu_type;
	attr.config = p->retprobe ? 1ULL << u->retprobe_bit : 0;
	/* The uprobe PMU's ref_ctr_offset field (config:32-63): the kernel
	 * raises the semaphore while the probe is in. */
	attr.config |= p->ref_ctr << 32;
	attr.config1 = (uint64_t)(uintptr_t)p->path; /* uprobe_path */
	attr.config2 = p->offset;		     /* probe_offset */
	if (!u->bpf)
		return open_on_cpus(u, &attr, tid, (uint64_t)probe << 1 | (p->retprobe != 0), 0);
	/* The program writes the hit, on whatever CPU: one event, on thread
	 * tid for its whole process (uprobe_attach_process_events()), its
	 * cookie the probe's as a link's would be. */
	int fd = perf_event_open_fd(&attr, tid, -1);
	if (fd < 0)
		return errno == EPERM ? -EACCES : -errno;
	int link = ubpf_event_link_new(u->prog_fd, fd, uprobe_cookie(u, probe));
	if (link < 0 || fds_push(u, fd, tid, 0) < 0) {
		close(fd);
		if (link >= 0)
			close(link);
		return link < 0 ? link : -ENOMEM;
	}
	if (fds_push(u, link, tid, 0) < 0) {
		close(link);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Link mode: the links of every probe for process pid (0: every process),
 * one per file and direction, each offset's cookie its probe's index.
 * The kernel puts a link's breakpoints in one at a time, in the order of
 * its offsets, so the later probes go first and return links before entry
 * links: a function's exits are in place before its entry (uprobe.h), and
 * a call that starts meanwhile is seen returning without its entry, never
 * entering without a return (which would read as unwound by an
 * exception). Returns 0 or -errno
 * (-ESRCH when the process is gone), with u->error_path naming the file
 * whose link failed.
 */
int uprobe_attach_links(struct uprobe_set *u, pid_t pid)
{
	uint64_t *offsets = calloc(u->nprobes, sizeof(*offsets));
	uint64_t *cookies = calloc(u->nprobes, sizeof(*cookies));
	uint64_t *ref_ctrs = calloc(u->nprobes, sizeof(*ref_ctrs));
	char *done = calloc(u->nprobes, 1);
	int err = offsets && cookies && ref_ctrs && done ? 0 : -ENOMEM;

	for (size_t k = 0; k < 2 * u->nprobes && !err; k++) {
		size_t i = u->nprobes - 1 - k % u->nprobes;
		const struct uprobe_probe *p = &u->probes[i];
		size_t n = 0;
		if (done[i] || p->retprobe != (k < u->nprobes))
			continue;
		for (size_t j = i + 1; j-- > 0;)
			if (!done[j] && u->probes[j].retprobe == p->retprobe &&
			    strcmp(u->probes[j].path, p->path) == 0) {
				offsets[n] = u->probes[j].offset;
				ref_ctrs[n] = u->probes[j].ref_ctr;
				cookies[n++] = uprobe_cookie(u, j);
				done[j] = 1;
			}
		int sema = 0;
		for (size_t j = 0; j < n; j++)
			sema |= ref_ctrs[j] != 0;
		int fd = ubpf_link_new(u->prog_fd, p->path, offsets, sema ? ref_ctrs : NULL, cookies,
				       n, p->retprobe ? UBPF_LINK_RETURN : UBPF_LINK_ENTRY, pid);
		if (fd < 0) {
			err = fd;
			u->error_path = p->path;
		} else if ((err = fds_push(u, fd, pid, 1)) < 0) {
			close(fd);
		}
	}
	free(offsets);
	free(cookies);
	free(ref_ctrs);
	free(done);
	return err;
}

/* Event mode: the probe events that ntids more threads take (with the
 * BPF program, a process's probes are opened once, on one of its
 * threads). */
size_t uprobe_events_for(const struct uprobe_set *u, size_t ntids)
{
	return u->bpf ? u->nprobes : u->nprobes * ntids * u->ncpus;
}

/*
 * Event mode with the BPF program: every probe opened once for process
 * pid, on its main thread, or if that is gone on the first of its ntids
 * threads tids that takes it. A probe
 * event bound to one thread runs its program at the hits of every thread
 * of that thread's address space (the kernel filters uprobes by address
 * space, and only perf's own sample looks at the thread): the process's
 * threads, present and future, are all traced, as with a link, and one
 * event per thread would run the program once per thread at each hit.
 * Returns 0 or -errno (-ESRCH when every thread is gone).
 */
int uprobe_attach_process_events(struct uprobe_set *u, pid_t pid, const pid_t *tids, size_t ntids)
{
	u->events_wanted = u->nevents + uprobe_events_for(u, 1);
	if (!uprobe_within_budget(u, 1))
		return -E2BIG;
	int err = -ESRCH;
	for (size_t t = 0; t <= ntids && err == -ESRCH; t++) {
		pid_t on = t == 0 ? pid : tids[t - 1];
		size_t first = u->nfds;
		if (t > 0 && on == pid)
			continue;
		err = 0;
		/* The last declared first: a function's exits before its
		 * entry (uprobe_set_add()). */
		for (size_t i = u->nprobes; i-- > 0 && !err;)
			if ((err = uprobe_open_probe(u, i, on)) < 0 && err != -ESRCH)
				u->error_path = u->probes[i].path;
		if (err)
			fds_truncate(u, first);
	}
	if (!err)
		u->nevents += uprobe_events_for(u, 1);
	return err;
}

/* Whether ntids more threads stay within the config's max_events. */
int uprobe_within_budget(const struct uprobe_set *u, size_t ntids)
{
	return !u->cfg.max_events || u->nevents + uprobe_events_for(u, ntids) <= u->cfg.max_events;
}

/* Event mode: every probe on each of the threads tids (those that exited
 * meanwhile skipped). Returns 0 or -errno, as uprobe_attach_links(); -E2BIG
 * beyond the config's max_events. */
static int attach_events(struct uprobe_set *u, const pid_t *tids, size_t ntids)
{
	u->events_wanted = u->nevents + uprobe_events_for(u, ntids);
	if (!uprobe_within_budget(u, ntids))
		return -E2BIG;
	u->nevents += uprobe_events_for(u, ntids);
	/* The last declared first: a function's exits before its entry
	 * (uprobe_set_add()). */
	for (size_t i = u->nprobes; i-- > 0;) {
		size_t opened = 0;
		int err = 0;
		for (size_t t = 0; t < ntids && !err; t++) {
			err = uprobe_open_probe(u, i, tids[t]);
			if (err == -ESRCH)
				err = 0; /* exited meanwhile */
			else if (!err)
				opened++;
		}
		if (!err && !opened)
			err = -ESRCH;
		if (err) {
			u->error_path = u->probes[i].path;
			return err;
		}
	}
	return 0;
}

int uprobe_set_add(struct uprobe_set *u, const char *path, uint64_t offset, int retprobe)
{
	struct uprobe_probe *probes =
	    array_reserve(u->probes, &u->probes_cap, u->nprobes + 1, sizeof(*probes));
	if (!probes)
		return -ENOMEM;
	u->probes = probes;
	struct uprobe_probe *p = &u->probes[u->nprobes];
	p->path = strdup(path);
	p->offset = offset;
	p->retprobe = retprobe != 0;
	p->capture = 0;
	p->ref_ctr = 0;
	p->py_walk = 0;
	if (!p->path)
		return -ENOMEM;
	return (int)u->nprobes++;
}

void uprobe_set_semaphore(struct uprobe_set *u, int probe, uint64_t ref_ctr_offset)
{
	if (probe >= 0 && (size_t)probe < u->nprobes && ref_ctr_offset < UINT32_MAX)
		u->probes[probe].ref_ctr = ref_ctr_offset;
}

void uprobe_set_capture(struct uprobe_set *u, int probe, size_t size, int string)
{
	uprobe_set_capture_at(u, probe, X86_RAX, 0, size, string);
}

void uprobe_set_capture_at(struct uprobe_set *u, int probe, int reg, int disp, size_t size,
			   int string)
{
	if (probe < 0 || (size_t)probe >= u->nprobes || size == 0 || reg < 0 || reg >= X86_NGPR ||
	    disp < INT16_MIN || disp > INT16_MAX)
		return;
	if (size > UBPF_CAPTURE_MAX)
		size = UBPF_CAPTURE_MAX;
	u->probes[probe].capture = UBPF_CAPTURE | UBPF_CAPTURE_BITS(size) |
				   UBPF_CAPTURE_REG_BITS(reg) | UBPF_CAPTURE_DISP_BITS(disp) |
				   (string ? UBPF_CAPTURE_STRING : 0);
}

void uprobe_set_capture_strings(struct uprobe_set *u, int probe, int reg, int reg2)
{
	if (probe < 0 || (size_t)probe >= u->nprobes || reg < 0 || reg >= X86_NGPR || reg2 < 0 ||
	    reg2 >= X86_NGPR)
		return;
	u->probes[probe].capture = UBPF_CAPTURE | UBPF_CAPTURE_STRS | UBPF_CAPTURE_REG_BITS(reg) |
				   UBPF_CAPTURE_REG2_BITS(reg2);
}

void uprobe_set_capture_counted(struct uprobe_set *u, int probe, int reg, int len_reg)
{
	uprobe_set_capture_strings(u, probe, reg, len_reg);
	if (probe >= 0 && (size_t)probe < u->nprobes && u->probes[probe].capture)
		u->probes[probe].capture |= UBPF_CAPTURE_COUNTED;
}

void uprobe_set_py_walk(struct uprobe_set *u, int probe, int few)
{
	if (probe >= 0 && (size_t)probe < u->nprobes)
		u->probes[probe].py_walk = few ? 2 : 1;
}

int uprobe_set_py_process(struct uprobe_set *u, pid_t pid, const struct py_bpf_layout *L)
{
	uint32_t key = (uint32_t)pid;

	if (u->py_layouts_fd < 0)
		return -EOPNOTSUPP;
	return bpf_map_set(u->py_layouts_fd, &key, L);
}

uint64_t uprobe_cookie(const struct uprobe_set *u, size_t probe)
{
	const struct uprobe_probe *p = &u->probes[probe];

	uint64_t walk = !p->py_walk || u->py_layouts_fd < 0 ? 0
			: p->py_walk == 2		    ? UBPF_PY_WALK | UBPF_PY_FEW
							    : UBPF_PY_WALK;

	return probe | p->capture | walk;
}

int uprobe_set_attach(struct uprobe_set *u, pid_t pid, const pid_t *tids, size_t ntids)
{
	size_t first = u->nfds, alive = 0;
	int err = 0;

	u->error_path = NULL;
	for (size_t t = 0; t < ntids && !err; t++) {
		uint64_t state;
		int rc = 0;
		if (!u64map_get(&u->tids, (uint64_t)tids[t], &state)) {
			rc = open_watcher(u, tids[t]);
			if (!rc && u64map_put(&u->tids, (uint64_t)tids[t], TID_PROBED) < 0)
				rc = -ENOMEM;
		}
		if (rc == -ESRCH)
			continue; /* exited meanwhile */
		err = rc;
		alive++;
	}
	if (!err && !alive)
		err = -ESRCH;
	if (!err && u->family_fd >= 0)
		err = uprobe_family_attach(u, pid);
	else if (!err)
		err = u->links ? uprobe_attach_links(u, pid)
		      : u->bpf ? uprobe_attach_process_events(u, pid, tids, ntids)
			       : attach_events(u, tids, ntids);
	if (err)
		fds_truncate(u, first);
	else
		u->attached = 1;
	return err;
}

const char *uprobe_set_error_path(const struct uprobe_set *u)
{
	return u->error_path;
}

int uprobe_set_uses_links(const struct uprobe_set *u)
{
	return u->links;
}

int uprobe_set_uses_bpf(const struct uprobe_set *u)
{
	return u->bpf;
}

int uprobe_set_stack_copy(struct uprobe_set *u, uint32_t bytes)
{
	uint32_t zero = 0;

	if (!u->bpf || u->copy_fd < 0)
		return -EOPNOTSUPP;
	if (!bytes || bytes % 8 || bytes > UPROBE_MAX_STACK)
		return -EINVAL;
	return bpf_map_set(u->copy_fd, &zero, &bytes) < 0 ? -errno : 0;
}

size_t uprobe_set_events_wanted(const struct uprobe_set *u, size_t *ncpus)
{
	*ncpus = u->bpf ? 0 : u->ncpus;
	return u->events_wanted;
}

size_t uprobe_set_pollfds(const struct uprobe_set *u, int *fds, size_t max)
{
	for (size_t i = 0; i < 2 * u->ncpus && i < max; i++)
		fds[i] = u->rings[i].fd;
	return 2 * u->ncpus;
}

uint64_t uprobe_set_drops(const struct uprobe_set *u)
{
	uint32_t key = 0;
	uint64_t v = 0;

	if (u->drops_fd >= 0)
		bpf_map_get(u->drops_fd, &key, &v);
	return v;
}

const struct uprobe_stats *uprobe_set_stats(const struct uprobe_set *u)
{
	return &u->stats;
}
