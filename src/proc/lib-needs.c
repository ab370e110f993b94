/*
 * The libraries a program loads at its start (see lib-needs.h). Each name
 * in an object's DT_NEEDED is searched as glibc's ld.so searches it: a
 * name with a slash is that path; else the object's DT_RPATH (when it has
 * no DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH ($ORIGIN: the folder of
 * the object that names the path), the folders /etc/ld.so.conf lists (and
 * the files it includes), then the default folders. A file found must be
 * an ELF object of the program's class and machine, as the loader skips
 * a 32-bit library in a folder it searches. The glibc-hwcaps subfolders
 * (x86-64-v3 builds of a library) are not searched.
 */
#include "proc/lib-needs.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"

/* Libraries followed at most (a program links tens). */
#define MAX_LIBS 512

static const char *const default_dirs[] = {"/lib/x86_64-linux-gnu",
					   "/usr/lib/x86_64-linux-gnu",
					   "/lib64",
					   "/usr/lib64",
					   "/lib",
					   "/usr/lib"};

struct search {
	char **paths; /* found so far: the objects whose needs are read in turn */
	size_t n, cap;
	char *conf; /* the folders of ld.so.conf, ':'-separated, read once */
	int conf_read;
	int elf_class, machine; /* the program's */
};

/* The dynamic entries of f that matter here: its needed names
 * (malloc'ed, *needed of them, each a string of the ELF's), rpath and
 * runpath (or NULL), its interpreter (or NULL). */
struct dyn {
	const char **needed;
	size_t nneeded, cap;
	const char *rpath, *runpath;
	char *interp;
};

static int read_dyn(Elf *e, struct dyn *d)
{
	size_t nphdr;
	if (elf_getphdrnum(e, &nphdr) == 0)
		for (size_t i = 0; i < nphdr; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
				continue;
			size_t len;
			char *raw = elf_rawfile(e, &len);
			if (raw && ph.p_offset < len && ph.p_filesz <= len - ph.p_offset &&
			    ph.p_filesz > 1 && ph.p_filesz < PATH_MAX)
				d->interp = strndup(raw + ph.p_offset, ph.p_filesz);
		}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t count = data && sh.sh_entsize ? data->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < count; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			const char *s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_RPATH)
				d->rpath = s;
			else if (dyn.d_tag == DT_RUNPATH)
				d->runpath = s;
			else {
				const char **grown = array_reserve(d->needed, &d->cap,
								   d->nneeded + 1, sizeof(*grown));
				if (!grown)
					return -ENOMEM;
				d->needed = grown;
				d->needed[d->nneeded++] = s;
			}
		}
	}
	return 0;
}

/* Whether path is an ELF object of s's class and machine. */
static int fits(const struct search *s, const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	ssize_t got = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (got != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return 0;
	int machine = h[EI_DATA] == ELFDATA2LSB ? h[18] | h[19] << 8 : h[18] << 8 | h[19];
	return h[EI_CLASS] == s->elf_class && machine == s->machine;
}

/* Adds the real path of the file name names in folder dir (with
 * $ORIGIN or ${ORIGIN} at its start as origin) to s once; 1 when it is
 * there, 0 when not, -ENOMEM. */
static int try_dir(struct search *s, const char *dir, size_t dlen, const char *origin,
		   const char *name)
{
	char buf[PATH_MAX], real[PATH_MAX];
	int n;

	if (dlen >= 7 && strncmp(dir, "$ORIGIN", 7) == 0)
		n = snprintf(buf, sizeof(buf), "%s%.*s/%s", origin, (int)(dlen - 7), dir + 7, name);
	else if (dlen >= 9 && strncmp(dir, "${ORIGIN}", 9) == 0)
		n = snprintf(buf, sizeof(buf), "%s%.*s/%s", origin, (int)(dlen - 9), dir + 9, name);
	else
		n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, dir, name);
	if (n <= 0 || (size_t)n >= sizeof(buf) || !fits(s, buf) || !realpath(buf, real))
		return 0;
	if (s->n >= MAX_LIBS) /* a path there already, or one more left out */
		return 1;
	return array_add_string(&s->paths, &s->n, &s->cap, real) < 0 ? -ENOMEM : 1;
}

/* try_dir() over the ':'-separated folders of list. */
static int try_list(struct search *s, const char *list, const char *origin, const char *name)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ':');
		int rc = end > p ? try_dir(s, p, (size_t)(end - p), origin, name) : 0;
		if (rc)
			return rc;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Appends the folders of ld.so.conf file path (and of those it
 * includes, depth levels deep) to *out, ':'-separated. */
static void read_conf(const char *path, char **out, size_t *len, int depth)
{
	FILE *f = fopen(path, "re");
	char line[PATH_MAX];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");
		p[strcspn(p, "#\r\n")] = 0;
		size_t l = strlen(p);
		while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
			p[--l] = 0;
		if (!l)
			continue;
		if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			char *pat = p + 8 + strspn(p + 8, " \t"), full[PATH_MAX];
			glob_t g;
			snprintf(full, sizeof(full), "%s%s", *pat == '/' ? "" : "/etc/", pat);
			if (depth < 4 && glob(full, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_conf(g.gl_pathv[i], out, len, depth + 1);
				globfree(&g);
			}
			continue;
		}
		if (*p != '/' || strchr(p, ':'))
			continue;
		char *grown = realloc(*out, *len + l + 2);
		if (!grown)
			break;
		*out = grown;
		if (*len)
			(*out)[(*len)++] = ':';
		memcpy(*out + *len, p, l + 1);
		*len += l;
	}
	fclose(f);
}

/* Finds name, needed by the object at path (its rpath, runpath), into s. */
static int find(struct search *s, const char *path, const struct dyn *d, const char *name)
{
	char origin[PATH_MAX];
	const char *slash = strrchr(path, '/');
	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	if (*name == '/') /* the path itself */
		return try_dir(s, "", 0, origin, name + 1) < 0 ? -ENOMEM : 0;
	if (strchr(name, '/')) /* from the command's folder, recce's */
		return try_dir(s, ".", 1, origin, name) < 0 ? -ENOMEM : 0;
	int rc = 0;
	if (!d->runpath && d->rpath)
		rc = try_list(s, d->rpath, origin, name);
	if (!rc)
		rc = try_list(s, getenv("LD_LIBRARY_PATH"), origin, name);
	if (!rc && d->runpath)
		rc = try_list(s, d->runpath, origin, name);
	if (!rc) {
		if (!s->conf_read) {
			size_t len = 0;
			s->conf_read = 1;
			read_conf("/etc/ld.so.conf", &s->conf, &len, 0);
		}
		rc = try_list(s, s->conf, origin, name);
	}
	for (size_t i = 0; !rc && i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		rc = try_dir(s, default_dirs[i], strlen(default_dirs[i]), origin, name);
	return rc < 0 ? rc : 0;
}

/* Reads the object at s->paths[i] and finds what it needs. */
static int follow(struct search *s, size_t i, char **interp)
{
	int fd = open(s->paths[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return i ? 0 : -ENOENT;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct dyn d = {0};
	int rc = e && elf_kind(e) == ELF_K_ELF ? read_dyn(e, &d) : i ? 0 : -ENOENT;
	if (!i && e && elf_kind(e) == ELF_K_ELF) {
		GElf_Ehdr eh;
		if (gelf_getehdr(e, &eh)) {
			s->elf_class = gelf_getclass(e);
			s->machine = eh.e_machine;
		}
		*interp = d.interp;
		d.interp = NULL;
	}
	for (size_t k = 0; rc == 0 && k < d.nneeded; k++)
		rc = find(s, s->paths[i], &d, d.needed[k]);
	free(d.interp);
	free(d.needed);
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

int lib_needs(const char *program, char ***paths, size_t *n)
{
	struct search s = {0};
	char real[PATH_MAX], *interp = NULL;
	int rc = 0;

	*paths = NULL;
	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE || !realpath(program, real))
		return -ENOENT;
	if (!(s.paths = malloc(sizeof(*s.paths))) || !(s.paths[0] = strdup(real))) {
		free(s.paths);
		return -ENOMEM;
	}
	s.n = s.cap = 1;
	for (size_t i = 0; rc == 0 && i < s.n; i++)
		rc = follow(&s, i, &interp);
	if (rc == 0 && interp && realpath(interp, real)) {
		int seen = 0;
		for (size_t i = 0; i < s.n && !seen; i++)
			seen = strcmp(s.paths[i], real) == 0;
		if (!seen)
			rc = try_dir(&s, "", 0, "/", real + 1) < 0 ? -ENOMEM : 0;
	}
	free(interp);
	free(s.conf);
	free(s.paths[0]);
	if (rc < 0) {
		for (size_t i = 1; i < s.n; i++)
			free(s.paths[i]);
		free(s.paths);
		return rc;
	}
	memmove(s.paths, s.paths + 1, (s.n - 1) * sizeof(*s.paths));
	*paths = s.paths;
	*n = s.n - 1;
	return 0;
}
