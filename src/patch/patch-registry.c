/*
 * The file of a process's patches (see patch-registry.h). A line:
 *
 *   FUNC ADDR LEN ORIG CODE VENEER LIB NEWFUNC NEWADDR SINCE UID
 *
 * separated by tabs, addresses in hex, bytes as hex digits. Names hold
 * no tab or newline (patch refuses them).
 */
#include "patch/patch-registry.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/procstat.h"
#include "util/array.h"
#include "util/hex.h"
#include "util/outfile.h"
#include "util/readall.h"

#define REGISTRY_MAX (1u << 20)

int patch_registry_path(const char *dir, pid_t pid, char *buf, size_t len)
{
	struct procstat_reader r;
	struct procstat_task t;

	if (procstat_reader_init(&r, NULL))
		return -ENOMEM;
	int err = procstat_read_process(&r, pid, &t);
	procstat_reader_release(&r);
	if (err)
		return err;
	int n = snprintf(buf, len, "%s/%d-%" PRIu64, dir, (int)pid, t.starttime);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int copy_field(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static int parse_line(char *line, struct patch_record *p)
{
	char *f[11];
	int n = 0;

	memset(p, 0, sizeof(*p));
	for (char *s = line; n < 11; n++) {
		f[n] = s;
		char *tab = strchr(s, '\t');
		if (!tab) {
			n++;
			break;
		}
		*tab = 0;
		s = tab + 1;
	}
	if (n != 11)
		return -EBADMSG;
	char *end;
	p->addr = strtoull(f[1], &end, 16);
	p->len = (uint32_t)strtoul(f[2], &end, 10);
	if (p->len == 0 || p->len > PATCH_BYTES || copy_field(p->func, sizeof(p->func), f[0]) ||
	    hex_bytes(f[3], p->orig, p->len) || hex_bytes(f[4], p->code, p->len) ||
	    copy_field(p->lib, sizeof(p->lib), f[6]) ||
	    copy_field(p->newfunc, sizeof(p->newfunc), f[7]))
		return -EBADMSG;
	p->veneer = strtoull(f[5], &end, 16);
	p->new_addr = strtoull(f[8], &end, 16);
	p->since = strtoll(f[9], &end, 10);
	p->uid = (uid_t)strtoul(f[10], &end, 10);
	return 0;
}

int patch_registry_load(const char *dir, pid_t pid, struct patch_record **v, size_t *n)
{
	char path[1200], *text;
	size_t len, cap = 0;

	*v = NULL;
	*n = 0;
	int err = patch_registry_path(dir, pid, path, sizeof(path));
	if (err)
		return err;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = read_all(fd, REGISTRY_MAX, &text, &len);
	close(fd);
	if (err)
		return err;
	for (char *line = text, *next; line && *line && !err; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct patch_record *nv = array_reserve(*v, &cap, *n + 1, sizeof(**v));
		if (!nv) {
			err = -ENOMEM;
			break;
		}
		*v = nv;
		err = parse_line(line, &nv[*n]);
		if (!err)
			(*n)++;
	}
	free(text);
	if (err) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return err;
}

/* mkdir -p, each directory made 0700. */
static int make_dirs(const char *dir)
{
	char buf[1024];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
		*p = c;
	}
}

struct records {
	const struct patch_record *v;
	size_t n;
};

static int write_records(FILE *fp, const void *arg)
{
	const struct records *r = arg;
	char orig[2 * PATCH_BYTES + 1], code[2 * PATCH_BYTES + 1];

	for (size_t i = 0; i < r->n; i++) {
		const struct patch_record *p = &r->v[i];
		hex_of(p->orig, p->len, orig);
		hex_of(p->code, p->len, code);
		fprintf(fp,
			"%s\t%" PRIx64 "\t%u\t%s\t%s\t%" PRIx64 "\t%s\t%s\t%" PRIx64 "\t%" PRId64
			"\t%u\n",
			p->func, p->addr, p->len, orig, code, p->veneer, p->lib, p->newfunc,
			p->new_addr, p->since, (unsigned)p->uid);
	}
	return ferror(fp) ? -EIO : 0;
}

int patch_registry_save(const char *dir, pid_t pid, const struct patch_record *v, size_t n)
{
	char path[1200];

	int err = patch_registry_path(dir, pid, path, sizeof(path));
	if (err)
		return err;
	if (n == 0)
		return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
	err = make_dirs(dir);
	if (err)
		return err;
	struct records r = {v, n};
	return outfile_write(path, write_records, &r);
}
