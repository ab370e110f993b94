/*
 * /proc parsers and readers (see procstat.h). Every parser walks a bounded
 * buffer with explicit lengths; the kernel's formats are stable, but a
 * task can vanish mid-read and leave a short or empty file, which must
 * parse as an error, not as zeros.
 */
#include "proc/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/tasks.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/readall.h"

#define INITIAL_BUF (64 * 1024)
#define MAX_BUF	    (16 * 1024 * 1024) /* /proc/stat of a very large machine */

/* A cursor over [p, end): numbers are read one field at a time. */
struct field_cursor {
	const char *p, *end;
};

static void skip_spaces(struct field_cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int next_u64(struct field_cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	const char *start;

	skip_spaces(c);
	start = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		v = v * 10 + (uint64_t)(*c->p - '0');
		c->p++;
	}
	if (c->p == start)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Skips one space-separated field, whatever it holds (a negative number). */
static int skip_field(struct field_cursor *c)
{
	const char *start;

	skip_spaces(c);
	start = c->p;
	while (c->p < c->end && *c->p != ' ' && *c->p != '\n')
		c->p++;
	return c->p == start ? -EINVAL : 0;
}

/* Parses a non-negative decimal with an optional fraction ("12345.67"). */
static int next_double(struct field_cursor *c, double *out)
{
	uint64_t whole;
	double frac = 0, scale = 0.1;

	if (next_u64(c, &whole) < 0)
		return -EINVAL;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			frac += (*c->p - '0') * scale;
			scale /= 10;
			c->p++;
		}
	}
	*out = (double)whole + frac;
	return 0;
}

uint64_t procstat_cpu_busy(const struct procstat_cpu *c)
{
	return c->user + c->nice + c->system + c->irq + c->softirq + c->steal;
}

uint64_t procstat_cpu_all(const struct procstat_cpu *c)
{
	return procstat_cpu_busy(c) + c->idle + c->iowait;
}

int procstat_parse_stat(const char *buf, size_t len, struct procstat_task *t)
{
	const char *open = memchr(buf, '(', len);
	const char *close = NULL;
	uint64_t tid, v;

	if (!open)
		return -EINVAL;
	/* The name may hold ')' itself: it ends at the last one. */
	for (const char *p = buf + len; p > open; p--)
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	if (!close)
		return -EINVAL;
	struct field_cursor c = {buf, open};
	if (next_u64(&c, &tid) < 0)
		return -EINVAL;
	size_t n = (size_t)(close - open - 1);
	if (n >= PROCSTAT_COMM_LEN)
		n = PROCSTAT_COMM_LEN - 1;
	memcpy(t->comm, open + 1, n);
	t->comm[n] = 0;
	t->tid = (pid_t)tid;

	c.p = close + 1;
	c.end = buf + len;
	skip_spaces(&c);
	if (c.p >= c.end)
		return -EINVAL;
	t->state = *c.p++;
	/* Fields after the state, counted from 4 as in proc(5). */
	for (int field = 4; field <= 24; field++) {
		if (field == 4 || field == 14 || field == 15 || field == 20 || field == 22 ||
		    field == 24) {
			if (next_u64(&c, &v) < 0)
				return -EINVAL;
			if (field == 4)
				t->ppid = (pid_t)v;
			else if (field == 14)
				t->utime = v;
			else if (field == 15)
				t->stime = v;
			else if (field == 20)
				t->num_threads = (long)v;
			else if (field == 22)
				t->starttime = v;
			else
				t->rss_pages = v;
		} else if (skip_field(&c) < 0) {
			return -EINVAL;
		}
	}
	return 0;
}

/* The value of "Key:\t123" lines; returns 1 if key was found. */
static int status_value(const char *buf, size_t len, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		if ((size_t)(line_end - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == ':') {
			struct field_cursor c = {p + klen + 1, line_end};
			return next_u64(&c, out) == 0;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int procstat_parse_status(const char *buf, size_t len, struct procstat_task *t)
{
	uint64_t v;

	if (!status_value(buf, len, "Tgid", &v))
		return -EINVAL;
	t->pid = (pid_t)v;
	t->vcsw = status_value(buf, len, "voluntary_ctxt_switches", &v) ? v : 0;
	t->ivcsw = status_value(buf, len, "nonvoluntary_ctxt_switches", &v) ? v : 0;
	return 0;
}

int procstat_parse_uptime(const char *buf, size_t len, double *uptime)
{
	struct field_cursor c = {buf, buf + len};

	return next_double(&c, uptime);
}

int procstat_parse_loadavg(const char *buf, size_t len, double load[3])
{
	struct field_cursor c = {buf, buf + len};

	for (int i = 0; i < 3; i++)
		if (next_double(&c, &load[i]) < 0)
			return -EINVAL;
	return 0;
}

int procstat_parse_meminfo(const char *buf, size_t len, struct procstat_system *s)
{
	uint64_t v;

	if (!status_value(buf, len, "MemTotal", &v))
		return -EINVAL;
	s->mem_total_kb = v;
	s->mem_available_kb = status_value(buf, len, "MemAvailable", &v) ? v : 0;
	s->swap_total_kb = status_value(buf, len, "SwapTotal", &v) ? v : 0;
	s->swap_free_kb = status_value(buf, len, "SwapFree", &v) ? v : 0;
	return 0;
}

static int parse_cpu_line(struct field_cursor *c, struct procstat_cpu *cpu)
{
	uint64_t *f[] = {&cpu->user,   &cpu->nice, &cpu->system,  &cpu->idle,
			 &cpu->iowait, &cpu->irq,  &cpu->softirq, &cpu->steal};

	memset(cpu, 0, sizeof(*cpu));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (next_u64(c, f[i]) < 0)
			return i >= 4 ? 0 : -EINVAL; /* old kernels have fewer columns */
	return 0;
}

int procstat_parse_cpus(const char *buf, size_t len, struct procstat_system *s)
{
	const char *p = buf, *end = buf + len;
	int have_total = 0;

	s->ncpus = 0;
	s->ctxt = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;
		struct field_cursor c = {p, line_end};
		if (line_end - p > 4 && memcmp(p, "cpu ", 4) == 0) {
			c.p += 4;
			if (parse_cpu_line(&c, &s->total) < 0)
				return -EINVAL;
			have_total = 1;
		} else if (line_end - p > 3 && memcmp(p, "cpu", 3) == 0) {
			uint64_t n;
			c.p += 3;
			struct procstat_cpu cpu;
			if (next_u64(&c, &n) < 0 || parse_cpu_line(&c, &cpu) < 0)
				return -EINVAL;
			if (s->ncpus < PROCSTAT_MAX_CPUS)
				s->cpu[s->ncpus++] = cpu;
		} else if (line_end - p > 5 && memcmp(p, "ctxt ", 5) == 0) {
			c.p += 5;
			if (next_u64(&c, &s->ctxt) < 0)
				return -EINVAL;
		}
		p = nl ? nl + 1 : end;
	}
	return have_total ? 0 : -EINVAL;
}

/* Closes the files kept for h's task. */
static void close_held(struct procstat_reader *r, struct procstat_held *h)
{
	for (int which = 0; which < 2; which++)
		if (h->fd[which] >= 0) {
			close(h->fd[which]);
			h->fd[which] = -1;
			r->held_open--;
		}
}

/* The key of pid's task tid in held_at. */
static uint64_t held_key(pid_t pid, pid_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

int procstat_reader_init(struct procstat_reader *r, const char *root)
{
	memset(r, 0, sizeof(*r));
	u64map_init(&r->held_at);
	r->root = root ? root : "/proc";
	r->buf = malloc(INITIAL_BUF);
	if (!r->buf)
		return -ENOMEM;
	r->cap = INITIAL_BUF;
	return 0;
}

void procstat_reader_release(struct procstat_reader *r)
{
	for (size_t i = 0; i < r->nheld; i++)
		close_held(r, &r->held[i]);
	free(r->held);
	u64map_release(&r->held_at);
	free(r->buf);
	proc_ids_release(&r->ids);
	memset(r, 0, sizeof(*r));
}

/* The file open at fd read whole into the reader's buffer (NUL-
 * terminated): from its start, with pread, when it was read before (a
 * kept file). Returns its length or -errno. */
static ssize_t read_whole(struct procstat_reader *r, int fd, int again)
{
	size_t len = 0;

	for (;;) {
		if (len + 1 >= r->cap) {
			/* Grows rarely: the buffer is kept for later reads. */
			if (r->cap >= MAX_BUF)
				break;
			char *n = realloc(r->buf, r->cap * 2);
			if (!n)
				return -ENOMEM;
			r->buf = n;
			r->cap *= 2;
		}
		ssize_t got = again ? pread(fd, r->buf + len, r->cap - 1 - len, (off_t)len)
				    : read(fd, r->buf + len, r->cap - 1 - len);
		if (got < 0)
			return errno == ENOENT ? -ESRCH : -errno;
		if (got == 0)
			break;
		len += (size_t)got;
	}
	r->buf[len] = 0;
	return (ssize_t)len;
}

ssize_t procstat_read_file(struct procstat_reader *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read_whole(r, fd, 0);
	close(fd);
	return n;
}

void procstat_reader_hold(struct procstat_reader *r, size_t max_fds)
{
	r->held_max = max_fds;
}

size_t procstat_reader_held(const struct procstat_reader *r)
{
	return r->held_open;
}

void procstat_reader_sweep(struct procstat_reader *r)
{
	size_t kept = 0;

	u64map_release(&r->held_at);
	u64map_init(&r->held_at);
	for (size_t i = 0; i < r->nheld; i++) {
		struct procstat_held *h = &r->held[i];
		if (h->sweeps != r->sweeps || (h->fd[0] < 0 && h->fd[1] < 0)) {
			close_held(r, h);
			continue;
		}
		r->held[kept] = *h;
		/* Out of memory: the entry is left out of the map, and its
		 * files are opened again as a new one's. */
		if (u64map_put(&r->held_at, held_key(h->pid, h->tid), kept + 1) < 0) {
			close_held(r, &r->held[kept]);
			continue;
		}
		kept++;
	}
	r->nheld = kept;
	r->sweeps++;
}

/* The entry where the descriptors of pid's task tid are kept, found or
 * made, marked read in this sweep, with room for file which (0 stat, 1
 * status); NULL when files are not kept, or no more can be. */
static struct procstat_held *held_entry(struct procstat_reader *r, pid_t pid, pid_t tid, int which)
{
	uint64_t key = held_key(pid, tid), at;

	if (!r->held_max)
		return NULL;
	if (u64map_get(&r->held_at, key, &at)) {
		struct procstat_held *h = &r->held[at - 1];
		h->sweeps = r->sweeps;
		return h->fd[which] >= 0 || r->held_open < r->held_max ? h : NULL;
	}
	if (r->held_open >= r->held_max)
		return NULL;
	struct procstat_held *h = array_reserve(r->held, &r->held_cap, r->nheld + 1, sizeof(*h));
	if (!h)
		return NULL;
	r->held = h;
	if (u64map_put(&r->held_at, key, r->nheld + 1) < 0)
		return NULL;
	h = &r->held[r->nheld++];
	*h = (struct procstat_held){pid, tid, {-1, -1}, r->sweeps};
	return h;
}

/* File which (0 stat, 1 status) of pid's task tid (0: the process's own
 * stat), at path, read whole into the reader's buffer: through the
 * descriptor kept for it when there is one, else opened, and kept if
 * the reader keeps files. Returns its length (0 for a task gone) or
 * -errno. */
static ssize_t read_task_file(struct procstat_reader *r, pid_t pid, pid_t tid, int which,
			      const char *path)
{
	struct procstat_held *h = held_entry(r, pid, tid, which);

	if (h && h->fd[which] >= 0) {
		ssize_t n = read_whole(r, h->fd[which], 1);
		if (n > 0)
			return n;
		/* The task they were opened for is gone: a task with its id
		 * now is another, opened afresh. */
		close_held(r, h);
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read_whole(r, fd, 0);
	if (h && n > 0) {
		h->fd[which] = fd;
		r->held_open++;
	} else {
		close(fd);
	}
	return n;
}

/* Reads and parses the stat file of pid's task tid (0: the process's) at
 * path into a zeroed *t, noting when: 0, -ESRCH when the task is gone,
 * -errno. */
static int read_stat(struct procstat_reader *r, pid_t pid, pid_t tid, const char *path,
		     struct procstat_task *t)
{
	ssize_t n;

	memset(t, 0, sizeof(*t));
	n = read_task_file(r, pid, tid, 0, path);
	if (n < 0)
		return (int)n;
	/* A thread that exits while it is read leaves an empty file. */
	if (n == 0 || procstat_parse_stat(r->buf, (size_t)n, t) < 0)
		return -ESRCH;
	t->read_ns = time_now_ns(CLOCK_MONOTONIC);
	return 0;
}

int procstat_read_task(struct procstat_reader *r, pid_t pid, pid_t tid, struct procstat_task *t)
{
	char path[96];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", r->root, (int)pid, (int)tid);
	int err = read_stat(r, pid, tid, path, t);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%d/task/%d/status", r->root, (int)pid, (int)tid);
	n = read_task_file(r, pid, tid, 1, path);
	if (n < 0)
		return (int)n;
	if (n == 0 || procstat_parse_status(r->buf, (size_t)n, t) < 0)
		return -ESRCH;
	t->pid = pid;
	return 0;
}

int procstat_read_process(struct procstat_reader *r, pid_t pid, struct procstat_task *t)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/%d/stat", r->root, (int)pid);
	int err = read_stat(r, pid, 0, path, t);
	if (!err)
		t->pid = pid;
	return err;
}

/* Reads ROOT/name and parses it with one of the system parsers. */
static int read_system_file(struct procstat_reader *r, const char *name, int which,
			    struct procstat_system *s)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/%s", r->root, name);
	ssize_t n = procstat_read_file(r, path);
	if (n < 0)
		return (int)n;
	switch (which) {
	case 0:
		return procstat_parse_uptime(r->buf, (size_t)n, &s->uptime);
	case 1:
		return procstat_parse_loadavg(r->buf, (size_t)n, s->load);
	case 2:
		return procstat_parse_meminfo(r->buf, (size_t)n, s);
	default:
		return procstat_parse_cpus(r->buf, (size_t)n, s);
	}
}

int procstat_read_system(struct procstat_reader *r, struct procstat_system *s)
{
	static const char *const files[] = {"uptime", "loadavg", "meminfo", "stat"};

	for (int i = 0; i < 4; i++) {
		int err = read_system_file(r, files[i], i, s);
		if (err)
			return err;
	}
	return 0;
}

ssize_t procstat_list_tasks(struct procstat_reader *r, pid_t pid, const pid_t **ids)
{
	ssize_t n = proc_ids_list_tasks(&r->ids, r->root, pid, PROCSTAT_MAX_TASKS);

	*ids = r->ids.ids;
	return n;
}

int procstat_read_schedstat(struct procstat_reader *r, pid_t pid, uint64_t *run_ns,
			    uint64_t *wait_ns)
{
	const pid_t *ids;
	ssize_t n = procstat_list_tasks(r, pid, &ids);
	char path[96];

	*run_ns = *wait_ns = 0;
	if (n < 0)
		return (int)n;
	/* The listing lives in the reader, which each read below reuses for
	 * its buffer only. */
	for (ssize_t i = 0; i < n; i++) {
		unsigned long long run, wait;
		snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", r->root, (int)pid,
			 (int)ids[i]);
		if (procstat_read_file(r, path) > 0 &&
		    sscanf(r->buf, "%llu %llu", &run, &wait) == 2)
			*run_ns += run, *wait_ns += wait;
	}
	return 0;
}

ssize_t procstat_list_pids(struct procstat_reader *r, const pid_t **ids)
{
	ssize_t n = proc_ids_list_dir(&r->ids, r->root, PROCSTAT_MAX_TASKS);

	*ids = r->ids.ids;
	return n;
}

/* Whether pid is one of the n pids in v. */
static int among(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

ssize_t procstat_descendants(struct procstat_reader *r, const pid_t *roots, size_t nroots,
			     struct procstat_task **out, size_t *cap)
{
	const pid_t *ids;
	ssize_t n = procstat_list_pids(r, &ids);
	struct procstat_task *all = NULL;
	size_t nall = 0, allcap = 0;

	if (n < 0)
		return n;
	/* The listing lives in the reader, which the reads below reuse. */
	pid_t *pids = malloc(((size_t)n + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	memcpy(pids, ids, (size_t)n * sizeof(*pids));
	for (ssize_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s/%d/stat", r->root, (int)pids[i]);
		ssize_t len = procstat_read_file(r, path);
		struct procstat_task t = {0};
		if (len <= 0 || procstat_parse_stat(r->buf, (size_t)len, &t) < 0 || t.state == 'Z')
			continue;
		t.pid = pids[i];
		struct procstat_task *grown = array_reserve(all, &allcap, nall + 1, sizeof(*all));
		if (!grown) {
			free(all);
			free(pids);
			return -ENOMEM;
		}
		all = grown;
		all[nall++] = t;
	}
	free(pids);
	/* Rounds over the table until no process joins: a child listed
	 * before its parent is found in a later round. */
	size_t found = 0;
	for (int joined = 1; joined;) {
		joined = 0;
		for (size_t i = 0; i < nall; i++) {
			if (all[i].tid == 0 || among(roots, nroots, all[i].pid))
				continue;
			int parent = among(roots, nroots, all[i].ppid);
			for (size_t k = 0; k < found && !parent; k++)
				parent = (*out)[k].pid == all[i].ppid;
			if (!parent)
				continue;
			struct procstat_task *grown =
			    array_reserve(*out, cap, found + 1, sizeof(**out));
			if (!grown) {
				free(all);
				return -ENOMEM;
			}
			*out = grown;
			(*out)[found++] = all[i];
			all[i].tid = 0; /* taken */
			joined = 1;
		}
	}
	free(all);
	return (ssize_t)found;
}

char procstat_task_state(pid_t pid, pid_t tid)
{
	struct procstat_reader r;
	struct procstat_task t;

	if (procstat_reader_init(&r, NULL) != 0)
		return 0;
	char state = procstat_read_task(&r, pid, tid, &t) == 0 ? t.state : 0;
	procstat_reader_release(&r);
	return state;
}

int procstat_exited(struct procstat_reader *r, pid_t pid, int *zombie)
{
	struct procstat_task t;
	int err = procstat_read_task(r, pid, pid, &t);

	*zombie = !err && (t.state == 'Z' || t.state == 'X');
	return err == -ESRCH || *zombie;
}

pid_t proc_tgid_of(pid_t tid)
{
	char path[64];
	char *buf;
	size_t len;
	struct procstat_task t = {0};

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	int fd = tid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return -ESRCH;
	int err = read_all(fd, 1 << 16, &buf, &len);
	close(fd);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -ESRCH;
	err = procstat_parse_status(buf, len, &t);
	free(buf);
	return err || t.pid <= 0 ? -ESRCH : t.pid;
}
