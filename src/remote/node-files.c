/*
 * The files a client keeps on a node (see node-files.h): a directory per
 * client, sets moved there after a command, listed and sent back.
 */
#include "remote/node-files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/frame.h"
#include "store/store.h"
#include "util/array.h"
#include "util/clock.h"

/* Makes path and the directories above it that are missing, 0700. */
static int make_dirs(char *path)
{
	for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		int rc = mkdir(path, 0700);
		if (s)
			*s = '/';
		if (rc < 0 && errno != EEXIST)
			return -errno;
		if (!s)
			return 0;
	}
}

int node_files_dir(const char *base, const char *cert, uid_t uid, gid_t gid, int chown_to,
		   char *buf, size_t len)
{
	char who[300];

	if (cert[0]) {
		/* A certificate's name, as a file name: nothing but these. */
		size_t n = 0;
		n += (size_t)snprintf(who, sizeof(who), "cert-");
		for (const char *c = cert; *c && n + 1 < sizeof(who); c++)
			who[n++] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789-_.",
					  *c) &&
					   *c
				       ? *c
				       : '_';
		who[n] = '\0';
	} else {
		snprintf(who, sizeof(who), "uid-%u", (unsigned)uid);
	}
	if ((size_t)snprintf(buf, len, "%s/%s", base, who) >= len)
		return -ENAMETOOLONG;
	int err = make_dirs(buf);
	if (!err && chown_to && chown(buf, uid, gid) < 0)
		err = -errno;
	return err;
}

int node_files_in_set(const char *name, const char *want)
{
	size_t n = strlen(want);

	if (strncmp(name, want, n) != 0)
		return 0;
	if (!name[n])
		return 1;
	if (name[n] != '.' || !name[n + 1])
		return 0;
	return strspn(name + n + 1, "0123456789") == strlen(name + n + 1);
}

static int in_any_set(const char *name, char *const *sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (node_files_in_set(name, sets[i]))
			return 1;
	return 0;
}

size_t node_files_keep(int from, const char *dir, char *const *keep, size_t n)
{
	int to = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int scan = dup(from);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	size_t moved = 0;

	if (!d && scan >= 0)
		close(scan);
	for (struct dirent *e; to >= 0 && d && (e = readdir(d));) {
		struct stat st;
		/* The command's own files only: not a link, nor a second name
		 * of a file someone else made. */
		if (e->d_type == DT_REG && in_any_set(e->d_name, keep, n) &&
		    fstatat(from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    renameat(from, e->d_name, to, e->d_name) == 0)
			moved++;
	}
	if (d)
		closedir(d);
	if (to >= 0)
		close(to);
	return moved;
}

int node_files_send(int fd, uint64_t id, int dirfd, const char *name)
{
	/* Not through a link, not a FIFO or device that would hang or never
	 * end, not a second name of a file someone else made. */
	int f = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (f < 0)
		return 0;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(f);
		return 0;
	}
	uint8_t *buf = malloc(FRAME_FILE_CHUNK);
	int err = buf ? 0 : -ENOMEM;
	uint64_t size = (uint64_t)st.st_size, sent = 0;
	uint64_t said = time_now_ns(CLOCK_MONOTONIC);
	for (int last = 0; !err && !last;) {
		ssize_t n = read(f, buf, FRAME_FILE_CHUNK);
		if (n < 0) {
			err = -errno;
			break;
		}
		last = (size_t)n < FRAME_FILE_CHUNK;
		/* A file that takes long to send says how far it got. */
		uint64_t now = time_now_ns(CLOCK_MONOTONIC);
		if (now >= said + PROGRESS_EVERY_NS) {
			char what[300];
			Recce__Agent__Progress pr = RECCE__AGENT__PROGRESS__INIT;
			snprintf(what, sizeof(what), "sending %s", name);
			pr.what = what;
			pr.done = sent;
			pr.total = size > sent ? size : 0;
			pr.unit = "bytes";
			said = now;
			if ((err = frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_PROGRESS,
						  &pr)))
				break;
		}
		sent += (uint64_t)n;
		Recce__Agent__File fl = RECCE__AGENT__FILE__INIT;
		fl.name = (char *)name;
		fl.data.data = buf;
		fl.data.len = (size_t)n;
		fl.last = last;
		err = frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_FILE, &fl);
	}
	free(buf);
	close(f);
	return err;
}

/* The regular files of dir, sorted by name: a heap array of heap names. */
static char **names_of(int dirfd, size_t *n)
{
	int scan = dup(dirfd);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d) {
		if (scan >= 0)
			close(scan);
		return NULL;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_type != DT_REG)
			continue;
		char **grown = array_reserve(v, &cap, *n + 1, sizeof(*v));
		char *name = grown ? strdup(e->d_name) : NULL;
		if (!name)
			break;
		v = grown;
		v[(*n)++] = name;
	}
	closedir(d);
	for (size_t i = 1; i < *n; i++) /* few files: insertion sort */
		for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

static int send_list(int fd, uint64_t id, int dirfd, char **names, size_t n)
{
	Recce__Agent__FileEntry *entries = calloc(n ? n : 1, sizeof(*entries));
	Recce__Agent__FileEntry **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	Recce__Agent__FileList list = RECCE__AGENT__FILE_LIST__INIT;
	size_t k = 0;

	if (!entries || !ptrs) {
		free(entries);
		free(ptrs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		recce__agent__file_entry__init(&entries[k]);
		entries[k].name = names[i];
		entries[k].size = (uint64_t)st.st_size;
		entries[k].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		ptrs[k] = &entries[k];
		k++;
	}
	list.files = ptrs;
	list.n_files = k;
	int err = frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_FILE_LIST, &list);
	free(entries);
	free(ptrs);
	return err;
}

static int send_exit(int fd, uint64_t id, int status)
{
	Recce__Agent__Exit ex = RECCE__AGENT__EXIT__INIT;

	ex.status = status;
	return frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_EXIT, &ex);
}

/* Sends the files of the sets fetch[0..n), then an Exit. */
static int send_sets(int fd, uint64_t id, int dirfd, char **names, size_t nnames,
		     char *const *fetch, size_t n, int remove)
{
	int err = 0, status = 0;

	for (size_t s = 0; s < n && !err; s++) {
		size_t found = 0;
		for (size_t i = 0; i < nnames && !err; i++) {
			if (!node_files_in_set(names[i], fetch[s]))
				continue;
			found++;
			err = node_files_send(fd, id, dirfd, names[i]);
			if (!err && remove)
				unlinkat(dirfd, names[i], 0);
		}
		if (!found && !err) {
			char line[600];
			int len =
			    snprintf(line, sizeof(line),
				     "recce: no file '%s' is kept on this node: 'recce --node "
				     "NODE files' lists them\n",
				     fetch[s]);
			Recce__Agent__Output o = RECCE__AGENT__OUTPUT__INIT;
			o.stream = 2;
			o.data.data = (uint8_t *)line;
			o.data.len = (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1;
			err = frame_send_msg(fd, id, RECCE__AGENT__ENVELOPE__BODY_OUTPUT, &o);
			status = 1;
		}
	}
	return err ? err : send_exit(fd, id, status);
}

int node_files_answer(int fd, uint64_t id, const char *dir, char *const *fetch, size_t n,
		      int remove)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	size_t nnames = 0;
	char **names = dirfd >= 0 ? names_of(dirfd, &nnames) : NULL;
	int err;

	if (!n)
		err = send_list(fd, id, dirfd, names, nnames);
	else
		err = send_sets(fd, id, dirfd, names, nnames, fetch, n, remove);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	if (dirfd >= 0)
		close(dirfd);
	return err;
}
