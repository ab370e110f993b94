/*
 * A target's memory and mappings (see target-mem.h).
 */
#include "inject/target-mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc-maps.h"
#include "util/array.h"
#include "util/path.h"
#include "util/readall.h"

#define MAPS_MAX (64u << 20) /* a /proc/PID/maps larger than this is not read */

static int mem_open(pid_t pid, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : fd;
}

int tmem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	int fd = mem_open(pid, O_RDONLY);
	if (fd < 0)
		return fd;
	ssize_t n = pread(fd, buf, len, (off_t)addr);
	int err = n < 0 ? -errno : (size_t)n == len ? 0 : -EFAULT;
	close(fd);
	return err;
}

int tmem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	int fd = mem_open(pid, O_RDWR);
	if (fd < 0)
		return fd;
	ssize_t n = pwrite(fd, buf, len, (off_t)addr);
	int err = n < 0 ? -errno : (size_t)n == len ? 0 : -EFAULT;
	close(fd);
	return err;
}

int tmem_read_string(pid_t pid, uint64_t addr, char *buf, size_t cap)
{
	if (!cap)
		return -EINVAL;
	buf[0] = 0;
	int fd = mem_open(pid, O_RDONLY);
	if (fd < 0)
		return fd;
	size_t got = 0;
	while (got < cap - 1) {
		/* A page at a time: an unmapped page after a short string
		 * must not fail the whole read. */
		size_t want = 4096 - (size_t)((addr + got) & 4095);
		if (want > cap - 1 - got)
			want = cap - 1 - got;
		ssize_t n = pread(fd, buf + got, want, (off_t)(addr + got));
		if (n <= 0)
			break;
		if (memchr(buf + got, 0, (size_t)n)) {
			close(fd);
			return 0;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return got ? 0 : -EFAULT;
}

int tmaps_read(struct tmaps *m, pid_t pid)
{
	char path[64];
	size_t len, cap = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	int err = read_all(fd, MAPS_MAX, &m->text, &len);
	close(fd);
	if (err)
		return err;
	for (char *line = m->text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct proc_map pm;
		uint64_t inode;
		const char *p;
		if (!proc_maps_parse_line(line, &pm, &inode, &p))
			continue;
		struct tmap *v = array_reserve(m->v, &cap, m->n + 1, sizeof(*v));
		if (!v) {
			tmaps_release(m);
			return -ENOMEM;
		}
		m->v = v;
		v[m->n++] = (struct tmap){pm.start, pm.end, pm.pgoff, pm.prot, p};
	}
	return 0;
}

void tmaps_release(struct tmaps *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

const struct tmap *tmaps_find(const struct tmaps *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

int tmap_is(const struct tmap *m, const char *prefix)
{
	return strncmp(path_base(m->path), prefix, strlen(prefix)) == 0;
}
