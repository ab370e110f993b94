/*
 * JIT symbol maps (see perfmap.h). The file is written by the target, so
 * it is opened without following links and without blocking on a FIFO,
 * checked to be a regular file of the right owner, and read with capped
 * line length, line count, entry count, name length and name bytes: a
 * hostile map costs bounded time and memory and yields no more than the
 * names it contains; what the caps left out is counted (perfmap_losses).
 */
#include "symbols/perfmap.h"

#include "util/array.h"
#include "util/lines.h"
#include "util/ranges.h"
#include "util/strpool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERFMAP_LINE_MAX    4096
#define PERFMAP_NAME_MAX    512		  /* longer names are cut there */
#define PERFMAP_MAX_ENTRIES (1000 * 1000) /* a large JVM has a few 100,000 */
#define PERFMAP_MAX_LINES   (4 * PERFMAP_MAX_ENTRIES)
#define PERFMAP_MAX_BYTES   (64u << 20) /* of names, in all */

struct perfmap {
	struct ranges ranges; /* idx: names[] */
	const char **names;
	size_t n, cap;
	struct strpool strings;
	size_t name_bytes;
	size_t dropped, cut; /* entries left out at the caps, names shortened */
};

/* Parses "START SIZE NAME": hex numbers with or without 0x; the name is
 * the rest of the line (it may contain spaces). Returns 1 if well formed. */
static int parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	const char *p = line;
	size_t len;

	if (lines_parse_hex(&p, start) < 0 || lines_skip_blanks(&p) == 0)
		return 0;
	if (lines_parse_hex(&p, size) < 0 || lines_skip_blanks(&p) == 0)
		return 0;
	len = strlen(p);
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	line[p - line + (ptrdiff_t)len] = '\0';
	*name = line + (p - line);
	return len > 0 && *size > 0 && *start + *size > *start;
}

static int add_entry(struct perfmap *m, uint64_t start, uint64_t size, char *name)
{
	size_t len = strlen(name);
	if (len > PERFMAP_NAME_MAX) {
		name[PERFMAP_NAME_MAX] = '\0';
		len = PERFMAP_NAME_MAX;
		m->cut++;
	}
	if (m->name_bytes + len > PERFMAP_MAX_BYTES) {
		m->dropped++;
		return 0;
	}
	m->name_bytes += len;
	const char **v = array_reserve(m->names, &m->cap, m->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->names = v;
	m->names[m->n] = strpool_intern(&m->strings, name);
	if (!m->names[m->n])
		return -ENOMEM;
	/* The rank is the line order: a later line for the same start wins. */
	int rc = ranges_add(&m->ranges, start, start + size, (uint32_t)m->n, (uint32_t)m->n);
	if (rc == 0)
		m->n++;
	return rc;
}

static int load_file(struct perfmap *m, FILE *f)
{
	char line[PERFMAP_LINE_MAX];
	size_t nlines = 0;
	int r, rc;

	while (nlines++ < PERFMAP_MAX_LINES && (r = lines_read(f, line, sizeof(line))) != 0) {
		uint64_t start, size;
		char *name;

		if (r < 0 || !parse_line(line, &start, &size, &name))
			continue;
		if (m->n >= PERFMAP_MAX_ENTRIES) {
			m->dropped++;
			continue;
		}
		rc = add_entry(m, start, size, name);
		if (rc < 0)
			return rc;
	}
	if (ferror(f))
		return -EIO;
	return ranges_finish(&m->ranges, 1);
}

/* Opens path if it is a regular file owned by uid or root. */
static int open_checked(const char *path, uid_t uid, FILE **out)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_close;
	}
	if (st.st_uid != uid && st.st_uid != 0) {
		rc = -EPERM;
		goto out_close;
	}
	*out = fdopen(fd, "r");
	if (!*out) {
		rc = -errno;
		goto out_close;
	}
	return 0;

out_close:
	close(fd);
	return rc;
}

int perfmap_load(pid_t pid, uid_t uid, const char *path, struct perfmap **out)
{
	char buf[64];
	struct perfmap *m;
	FILE *f;
	int rc;

	if (!out)
		return -EINVAL;
	if (!path) {
		snprintf(buf, sizeof(buf), "/tmp/perf-%d.map", (int)pid);
		path = buf;
	}
	rc = open_checked(path, uid, &f);
	if (rc < 0)
		return rc;
	m = calloc(1, sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	ranges_init(&m->ranges);
	strpool_init(&m->strings);
	rc = load_file(m, f);
	fclose(f);
	if (rc < 0) {
		perfmap_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void perfmap_free(struct perfmap *m)
{
	if (!m)
		return;
	ranges_release(&m->ranges);
	strpool_release(&m->strings);
	free(m->names);
	free(m);
}

const char *perfmap_name(const struct perfmap *m, size_t i)
{
	return m && i < m->n ? m->names[i] : NULL;
}

void perfmap_losses(const struct perfmap *m, size_t *dropped, size_t *cut)
{
	*dropped = m ? m->dropped : 0;
	*cut = m ? m->cut : 0;
}

size_t perfmap_count(const struct perfmap *m)
{
	return m ? m->ranges.n : 0;
}

const char *perfmap_lookup(const struct perfmap *m, uint64_t addr, uint64_t *start)
{
	const struct range *r = m ? ranges_find(&m->ranges, addr) : NULL;

	if (!r)
		return NULL;
	if (start)
		*start = r->lo;
	return m->names[r->idx];
}
