/*
 * The process registry (see proc-maps.h). Each process keeps its
 * executable mappings sorted and non-overlapping, as the kernel does: a
 * new mapping cuts away whatever it covers of older ones. Files are
 * opened when the mapping is learnt, through /proc/PID/map_files/ first
 * (the very file that is mapped, even if it was deleted or replaced since),
 * so that symbolizing later does not depend on the process or the path
 * still being there.
 */
#include "proc/proc-maps.h"

#include "proc/exe-name.h"
#include "proc/py-names.h"
#include "symbols/elf-build-id.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/lines.h"
#include "util/path.h"
#include "util/strpool.h"
#include "util/u64map.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A maps line: fixed fields of about 75 bytes, then a path. */
#define PATH_MAX_LEN   4096
#define MAPS_LINE_MAX  (PATH_MAX_LEN + 128)
#define DELETED_SUFFIX " (deleted)"

struct proc {
	pid_t pid;
	uid_t uid;
	const char *comm;
	/* The program's real path and the name it was run by, when they
	 * differ (exe_as_run NULL otherwise); looked up once per exec. */
	const char *exe_real, *exe_as_run;
	int exe_looked;
	/* Without maps: the program and build-id it was noted running
	 * (procs_note()), until an exec. */
	const char *noted_exe, *noted_build_id;
	struct proc_map *maps; /* sorted by start, non-overlapping */
	size_t nmaps, cap;
	int dead_seen; /* procs_forget_dead() found it gone once */
	int gone;      /* and again: it goes from the registry */
};

struct proc_registry {
	struct symbolizer *sym;
	struct u64map by_pid; /* pid -> index in procs[] */
	struct proc *procs;
	size_t nprocs, cap;
	struct strpool strings;
	struct py_names *py; /* made on first use */
};

struct proc_registry *procs_new(struct symbolizer *sym)
{
	struct proc_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->sym = sym;
	u64map_init(&r->by_pid);
	strpool_init(&r->strings);
	return r;
}

void procs_free(struct proc_registry *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++)
		free(r->procs[i].maps);
	free(r->procs);
	u64map_release(&r->by_pid);
	strpool_release(&r->strings);
	py_names_free(r->py);
	free(r);
}

struct symbolizer *procs_symbolizer(const struct proc_registry *r)
{
	return r->sym;
}

struct py_names *procs_py_names(struct proc_registry *r)
{
	if (!r->py)
		r->py = py_names_new();
	return r->py;
}

void procs_mark_files(struct proc_registry *r)
{
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t j = 0; j < r->procs[i].nmaps; j++)
			sym_file_mark(r->procs[i].maps[j].file);
}

/* Removes the processes marked gone, keeping the others in order, with
 * the map by pid made anew first (it has no removal): where memory runs
 * out, nothing moves and the entries stay, mappings freed. */
static void compact(struct proc_registry *r)
{
	struct u64map by_pid;
	size_t kept = 0;

	u64map_init(&by_pid);
	for (size_t i = 0; i < r->nprocs; i++) {
		if (r->procs[i].gone)
			continue;
		if (u64map_put(&by_pid, (uint32_t)r->procs[i].pid, kept++) < 0) {
			u64map_release(&by_pid);
			return;
		}
	}
	kept = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		if (!r->procs[i].gone)
			r->procs[kept++] = r->procs[i];
	r->nprocs = kept;
	u64map_release(&r->by_pid);
	r->by_pid = by_pid;
}

size_t procs_forget_dead(struct proc_registry *r)
{
	size_t n = 0, gone = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct proc *p = &r->procs[i];
		if (kill(p->pid, 0) == 0 || errno != ESRCH)
			continue;
		/* Its last samples may still be in a ring: they go with the
		 * next window, named with these mappings. */
		if (!p->dead_seen++)
			continue;
		n += p->maps != NULL;
		free(p->maps);
		p->maps = NULL;
		p->nmaps = p->cap = 0;
		p->gone = 1;
		gone++;
	}
	if (gone)
		compact(r);
	return n;
}

const struct proc_map *procs_exe(struct proc_registry *r, pid_t pid)
{
	const struct proc_map *maps;
	size_t n = procs_maps(r, pid, &maps);

	for (size_t i = 0; i < n; i++)
		if (maps[i].file && maps[i].path[0] == '/')
			return &maps[i];
	return NULL;
}

static struct proc *proc_find(struct proc_registry *r, pid_t pid)
{
	uint64_t i;

	if (!u64map_get(&r->by_pid, (uint32_t)pid, &i))
		return NULL;
	return &r->procs[i];
}

static struct proc *proc_get(struct proc_registry *r, pid_t pid)
{
	struct proc *p = proc_find(r, pid);

	if (p)
		return p;
	struct proc *v = array_reserve(r->procs, &r->cap, r->nprocs + 1, sizeof(*v));
	if (!v)
		return NULL;
	r->procs = v;
	if (u64map_put(&r->by_pid, (uint32_t)pid, r->nprocs) < 0)
		return NULL;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->uid = (uid_t)-1;
	return p;
}

/*
 * Inserts m, cutting what it overlaps out of older mappings: those fully
 * covered go, one that sticks out on a side keeps that side (with its file
 * offset moved along), one that covers m on both sides splits in two.
 */
static int proc_insert(struct proc *p, const struct proc_map *m)
{
	size_t cap = p->nmaps + 2, n = 0;
	struct proc_map *out = malloc(cap * sizeof(*out));
	int placed = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct proc_map old = p->maps[i];
		if (old.end <= m->start) {
			out[n++] = old;
			continue;
		}
		if (old.start >= m->end) {
			if (!placed)
				out[n++] = *m;
			placed = 1;
			out[n++] = old;
			continue;
		}
		if (old.start < m->start) {
			out[n] = old;
			out[n++].end = m->start;
		}
		if (!placed)
			out[n++] = *m;
		placed = 1;
		if (old.end > m->end) {
			out[n] = old;
			out[n].start = m->end;
			out[n++].pgoff = old.pgoff + (m->end - old.start);
		}
	}
	if (!placed)
		out[n++] = *m;
	free(p->maps);
	p->maps = out;
	p->nmaps = n;
	p->cap = cap;
	return 0;
}

/* The path without the kernel's " (deleted)" mark, interned. */
static const char *clean_path(struct proc_registry *r, const char *path, int *deleted)
{
	size_t len = strlen(path), slen = strlen(DELETED_SUFFIX);

	*deleted = len > slen && strcmp(path + len - slen, DELETED_SUFFIX) == 0;
	return strpool_intern_len(&r->strings, path, *deleted ? len - slen : len);
}

/* Looks up once, after each exec, the name p's program was run by. */
static void look_up_exe(struct proc_registry *r, struct proc *p)
{
	char real[4096], as_run[4096];

	if (p->exe_looked)
		return;
	p->exe_looked = 1;
	p->exe_real = p->exe_as_run = NULL;
	if (exe_name_as_run(p->pid, real, sizeof(real), as_run, sizeof(as_run)) == 1) {
		p->exe_real = strpool_intern(&r->strings, real);
		p->exe_as_run = strpool_intern(&r->strings, as_run);
	}
}

/* Sets m's path to the name people know it by, real_path to the
 * kernel's (m->path on entry, interned). */
static void name_mapping(const struct proc *p, struct proc_map *m)
{
	m->real_path = m->path;
	if (p->exe_as_run && p->exe_real && strcmp(m->path, p->exe_real) == 0)
		m->path = p->exe_as_run;
}

/*
 * The sym_file for a mapping, or NULL when it is not an ELF file we can
 * open. map_files/ gives the mapped file itself; the path is only a
 * fallback, and not for a deleted file (the path may now name another
 * one), nor when the inode differs from what the maps line says.
 */
static struct sym_file *open_mapping(struct proc_registry *r, pid_t pid, uint64_t start,
				     uint64_t end, const char *path, uint64_t inode,
				     const struct proc_map *named)
{
	struct sym_file *f = NULL;
	char mf[96];
	int deleted, fd;
	const char *clean;

	if (strcmp(path, "[vdso]") == 0)
		return symbolizer_open_vdso(r->sym, &f) == 0 ? f : NULL;
	if (path[0] != '/')
		return NULL;
	clean = clean_path(r, path, &deleted);
	if (!clean)
		return NULL;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && !deleted)
		fd = open(clean, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (inode && fstat(fd, &st) == 0 && (uint64_t)st.st_ino != inode) {
		close(fd);
		return NULL;
	}
	/* A program run through a symlink is known by that name, which
	 * names its functions that only .eh_frame knows. */
	if (symbolizer_open(r->sym, named->path != named->real_path ? named->path : clean, fd, &f) <
	    0)
		f = NULL;
	close(fd);
	return f;
}

static int prot_of(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

int proc_maps_parse_line(const char *line, struct proc_map *m, uint64_t *inode, const char **path)
{
	const char *p = line;
	uint64_t dev;

	if (lines_parse_hex(&p, &m->start) < 0 || *p++ != '-' || lines_parse_hex(&p, &m->end) < 0 ||
	    lines_skip_blanks(&p) == 0)
		return 0;
	if (strlen(p) < 4 || (p[4] != ' ' && p[4] != '\t'))
		return 0;
	m->prot = prot_of(p);
	p += 4;
	lines_skip_blanks(&p);
	if (lines_parse_hex(&p, &m->pgoff) < 0 || lines_skip_blanks(&p) == 0 ||
	    lines_parse_hex(&p, &dev) < 0 || *p++ != ':' || lines_parse_hex(&p, &dev) < 0 ||
	    lines_skip_blanks(&p) == 0 || lines_parse_dec(&p, inode) < 0)
		return 0;
	lines_skip_blanks(&p);
	*path = p;
	return m->start < m->end;
}

static int read_maps(struct proc_registry *r, const struct proc *p, struct proc_map **maps,
		     size_t *n)
{
	char file[64], *line;
	size_t cap = 0;
	FILE *f;
	int rc = 0, got;

	pid_t pid = p->pid;

	*maps = NULL;
	*n = 0;
	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	line = malloc(MAPS_LINE_MAX);
	if (!line) {
		fclose(f);
		return -ENOMEM;
	}
	while ((got = lines_read(f, line, MAPS_LINE_MAX)) != 0) {
		struct proc_map m = {0};
		uint64_t inode;
		const char *path;

		if (got < 0 || !proc_maps_parse_line(line, &m, &inode, &path) ||
		    !(m.prot & PROT_EXEC))
			continue;
		struct proc_map *v = array_reserve(*maps, &cap, *n + 1, sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			break;
		}
		*maps = v;
		m.path = strpool_intern(&r->strings, *path ? path : "//anon");
		if (!m.path) {
			rc = -ENOMEM;
			break;
		}
		/* The kernel lists mappings in order; keep ours sorted even
		 * if a line is out of place. */
		if (*n > 0 && (*maps)[*n - 1].end > m.start)
			continue;
		name_mapping(p, &m);
		m.file = open_mapping(r, pid, m.start, m.end, path, inode, &m);
		(*maps)[(*n)++] = m;
	}
	free(line);
	fclose(f);
	if (rc < 0) {
		free(*maps);
		*maps = NULL;
	}
	return rc;
}

/* The effective uid from /proc/PID/status, or (uid_t)-1. */
static uid_t read_uid(pid_t pid)
{
	char file[64];
	uint64_t ids[2];

	snprintf(file, sizeof(file), "/proc/%d/status", (int)pid);
	if (lines_key_numbers(file, "Uid", ids, 2) != 2 || ids[1] >= (uid_t)-1)
		return (uid_t)-1;
	return (uid_t)ids[1];
}

static int read_comm(struct proc_registry *r, pid_t pid, struct proc *p)
{
	char file[64], line[64];
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/comm", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return 0;
	if (lines_read(f, line, sizeof(line)) > 0) {
		const char *c = strpool_intern(&r->strings, line);
		if (!c) {
			fclose(f);
			return -ENOMEM;
		}
		p->comm = c;
	}
	fclose(f);
	return 0;
}

int procs_scan(struct proc_registry *r, pid_t pid)
{
	struct proc_map *maps = NULL;
	struct proc *p;
	size_t n = 0;
	int rc;

	if (!r || pid <= 0)
		return -EINVAL;
	/* Read into a stand-in first: a process that is not there is not
	 * registered. */
	struct proc look = {.pid = pid};
	look_up_exe(r, &look);
	rc = read_maps(r, &look, &maps, &n);
	if (rc < 0)
		return rc;
	p = proc_get(r, pid);
	if (!p) {
		free(maps);
		return -ENOMEM;
	}
	p->exe_real = look.exe_real;
	p->exe_as_run = look.exe_as_run;
	p->exe_looked = 1;
	free(p->maps);
	p->maps = maps;
	p->nmaps = p->cap = n;
	p->uid = read_uid(pid);
	return read_comm(r, pid, p);
}

int procs_note(struct proc_registry *r, pid_t pid)
{
	char real[4096], as_run[4096], path[64], id[129];

	if (!r || pid <= 0)
		return -EINVAL;
	if (proc_find(r, pid))
		return 0;
	int named = exe_name_as_run(pid, real, sizeof(real), as_run, sizeof(as_run));
	if (named < 0)
		return -ESRCH;
	/* The file the process runs, whatever its path holds by now. */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		elf_build_id(fd, id, sizeof(id));
		close(fd);
	} else {
		id[0] = '\0';
	}
	struct proc *p = proc_get(r, pid);
	if (!p)
		return -ENOMEM;
	p->noted_exe = strpool_intern(&r->strings, named == 1 ? as_run : real);
	p->noted_build_id = strpool_intern(&r->strings, id);
	if (!p->noted_exe || !p->noted_build_id)
		return -ENOMEM;
	return read_comm(r, pid, p);
}

int procs_program(struct proc_registry *r, pid_t pid, const char **path, const char **build_id)
{
	const struct proc_map *exe = procs_exe(r, pid);
	const struct proc *p = r ? proc_find(r, pid) : NULL;

	*path = *build_id = "";
	if (exe) {
		*path = exe->path;
		*build_id = exe->file	    ? sym_file_build_id(exe->file)
			    : exe->build_id ? exe->build_id
					    : "";
		return 1;
	}
	if (!p || !p->noted_exe)
		return 0;
	*path = p->noted_exe;
	*build_id = p->noted_build_id;
	return 1;
}

int procs_mmap(struct proc_registry *r, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	       const char *path, int prot, const char *build_id)
{
	struct proc_map m = {0};
	struct proc *p;

	if (!r)
		return -EINVAL;
	if (!(prot & PROT_EXEC))
		return 0;
	if (len == 0 || start + len < start)
		return -EINVAL;
	p = proc_get(r, pid);
	if (!p)
		return -ENOMEM;
	if (!path || !*path)
		path = "//anon";
	m.start = start;
	m.end = start + len;
	m.pgoff = pgoff;
	m.prot = prot;
	m.path = strpool_intern(&r->strings, path);
	if (!m.path)
		return -ENOMEM;
	/* Only a file named otherwise than the command may be the program
	 * run through a symlink: most mappings cost no lookup. */
	if (!p->exe_looked && m.path[0] == '/' && p->comm &&
	    !exe_name_is_comm(path_base(m.path), p->comm))
		look_up_exe(r, p);
	name_mapping(p, &m);
	/* The record carries no inode; map_files/ still tells the truth
	 * while the process lives. */
	m.file = open_mapping(r, pid, m.start, m.end, path, 0, &m);
	if (build_id && build_id[0] && m.path[0] == '/' &&
	    (!m.file || strcmp(sym_file_build_id(m.file), build_id) != 0) &&
	    symbolizer_open_gone(r->sym, build_id, m.path, p->uid, &m.file) < 0) {
		m.file = NULL;
		m.build_id = strpool_intern(&r->strings, build_id);
	}
	return proc_insert(p, &m);
}

int procs_fork(struct proc_registry *r, pid_t parent, pid_t child)
{
	struct proc *p, *c;
	struct proc_map *maps = NULL;

	if (!r)
		return -EINVAL;
	if (!proc_find(r, parent))
		return -ESRCH;
	c = proc_get(r, child); /* may move procs[]: find the parent after */
	p = proc_find(r, parent);
	if (!c)
		return -ENOMEM;
	if (c == p)
		return 0;
	if (p->nmaps) {
		maps = malloc(p->nmaps * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		memcpy(maps, p->maps, p->nmaps * sizeof(*maps));
	}
	free(c->maps);
	c->maps = maps;
	c->nmaps = c->cap = p->nmaps;
	c->uid = p->uid;
	c->comm = p->comm;
	c->exe_real = p->exe_real;
	c->exe_as_run = p->exe_as_run;
	c->exe_looked = p->exe_looked;
	c->noted_exe = p->noted_exe;
	c->noted_build_id = p->noted_build_id;
	return 0;
}

void procs_exec(struct proc_registry *r, pid_t pid)
{
	struct proc *p = r ? proc_find(r, pid) : NULL;

	if (!p)
		return;
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->cap = 0;
	p->exe_looked = 0;
	p->exe_real = p->exe_as_run = NULL;
	p->noted_exe = p->noted_build_id = NULL;
}

const struct proc_map *procs_find(struct proc_registry *r, pid_t pid, uint64_t addr)
{
	struct proc *p = r ? proc_find(r, pid) : NULL;
	size_t lo = 0, hi;

	if (!p)
		return NULL;
	hi = p->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

size_t procs_maps(struct proc_registry *r, pid_t pid, const struct proc_map **maps)
{
	struct proc *p = r ? proc_find(r, pid) : NULL;

	*maps = p ? p->maps : NULL;
	return p ? p->nmaps : 0;
}

int procs_file_addr(struct proc_registry *r, pid_t pid, struct sym_file *f, uint64_t vaddr,
		    uint64_t *addr)
{
	const struct proc_map *maps;
	uint64_t off, base;

	if (sym_file_vaddr_to_offset(f, vaddr, &off) != 0)
		return -ENOENT;
	/* Through the file's load bias, which its executable mapping gives
	 * (sym_file_map_vaddr): a file page shared by two segments is mapped
	 * twice, at two addresses, and the offset alone cannot tell which. */
	size_t n = procs_maps(r, pid, &maps);
	for (size_t i = 0; i < n; i++) {
		uint64_t len = maps[i].end - maps[i].start;
		if (maps[i].file != f || !(maps[i].prot & PROT_EXEC) ||
		    sym_file_map_vaddr(f, maps[i].pgoff, len, 1, &base) != 0)
			continue;
		uint64_t at = maps[i].start - base + vaddr;
		for (size_t j = 0; j < n; j++)
			if (maps[j].file == f && at >= maps[j].start && at < maps[j].end) {
				*addr = at;
				return 0;
			}
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++)
		if (maps[i].file == f && off >= maps[i].pgoff &&
		    off - maps[i].pgoff < maps[i].end - maps[i].start) {
			*addr = maps[i].start + (off - maps[i].pgoff);
			return 0;
		}
	return -ENOENT;
}

uid_t procs_uid(struct proc_registry *r, pid_t pid)
{
	struct proc *p = r ? proc_find(r, pid) : NULL;

	return p ? p->uid : (uid_t)-1;
}

const char *procs_comm(struct proc_registry *r, pid_t pid)
{
	struct proc *p = r ? proc_find(r, pid) : NULL;

	return p ? p->comm : NULL;
}

int procs_set_comm(struct proc_registry *r, pid_t pid, const char *comm)
{
	struct proc *p;
	const char *c;

	if (!r || !comm)
		return -EINVAL;
	p = proc_get(r, pid);
	c = strpool_intern(&r->strings, comm);
	if (!p || !c)
		return -ENOMEM;
	p->comm = c;
	return 0;
}
