/*
 * The event file's life, from its creation at the process's first event
 * to its removal at a clean exit.
 *
 * The file is recce-PID.events in /dev/shm (or $RECCE_EVENTS_DIR). It is
 * built under a temporary name and renamed into place, so a reader never
 * finds a half-made file, and a file left by an earlier process with the
 * same pid (or by this process before an exec) is replaced whole. The
 * pages of the header and names are reserved when it is made, those of a
 * ring when a thread claims it: a full /dev/shm then refuses a ring with
 * ENOSPC instead of killing the program with SIGBUS on a write.
 *
 * Stale files, the documented policy (docs/librecce.md): a clean exit
 * removes the file unless $RECCE_KEEP is set; a process that crashed or
 * was killed leaves it for `recce events --postmortem`; the next process
 * to create a file in the directory removes files of processes that no
 * longer run once they are a day old, as does `recce events --clean` at
 * once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "recce.h"

#include "internal.h"

#define NAME_SLOTS    4096u
#define NAMES_SIZE    (128u * 1024u)
#define STALE_SECONDS (24 * 3600)

static uint64_t mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The tick counter and CLOCK_MONOTONIC read together: the closest of a
 * few tries, the ticks at their middle. A preemption between two reads
 * (milliseconds on a busy machine) would put every event's time, or the
 * rate a reader derives, that far off. */
static void clock_pair(uint64_t *ticks, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = clock_read(), m = mono_ns(CLOCK_MONOTONIC), b = clock_read();
		if (b >= a && b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*mono = m;
		}
	}
}

/* Reads a small /proc file into buf, NUL-terminated; its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* ppid, comm and start time from /proc/self/stat; boot id. */
static void fill_identity(struct recce_file_header *h)
{
	char buf[1024];

	struct utsname u;
	if (uname(&u) == 0)
		memcpy(h->host, u.nodename, strnlen(u.nodename, sizeof(h->host) - 1));
	h->pid = (int32_t)getpid();
	h->ppid = (int32_t)getppid();
	if (read_small("/proc/self/stat", buf, sizeof(buf)) > 0) {
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		if (open && close && close > open) {
			size_t n = (size_t)(close - open - 1);
			memcpy(h->comm, open + 1,
			       n < sizeof(h->comm) - 1 ? n : sizeof(h->comm) - 1);
			/* After ") ": state is field 3; starttime is field 22. */
			char *p = close + 2;
			for (int field = 3; field < 22 && p; field++) {
				p = strchr(p, ' ');
				if (p)
					p++;
			}
			if (p)
				h->start_ticks = strtoull(p, NULL, 10);
		}
	}
	ssize_t n = read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf));
	if (n > 0) {
		if (buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		size_t len = strlen(buf);
		memcpy(h->boot_id, buf, len < sizeof(h->boot_id) ? len : sizeof(h->boot_id) - 1);
	}
}

/* Removes this user's files of processes that are gone, once they are a
 * day old: what crashes left behind. */
static void remove_stale(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	int seen = 0;
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d)) && seen < 1024) {
		int pid = recce_events_name_pid(e->d_name);
		seen++;
		if (pid <= 0 || pid == getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    now - st.st_mtime < STALE_SECONDS)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* A new file beside path, named path.XXXXXX (mkostemp's template): a name
 * only this process could make, into buf. Its descriptor, or -1. */
static int make_beside(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s.XXXXXX", path);
	return mkostemp(buf, O_CLOEXEC);
}

/*
 * The file of this very process under path, from before an exec (the same
 * pid and start time, its owner us), set aside: marked EXECED and given a
 * name only this process could make, which goes into name (of len bytes,
 * "" when there was none), so that the new program's file takes the name
 * without losing the events the old one wrote.
 */
static void set_aside_before_exec(const char *path, const struct recce_file_header *now, char *name,
				  size_t len)
{
	struct recce_file_header old;
	struct stat st;
	char aside[sizeof(lib.path) + 16];

	name[0] = '\0';
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    pread(fd, &old, sizeof(old), 0) != (ssize_t)sizeof(old) ||
	    memcmp(old.magic, RECCE_FILE_MAGIC, sizeof(old.magic)) != 0 || old.pid != now->pid ||
	    old.start_ticks != now->start_ticks || old.state != RECCE_PROC_RUNNING) {
		close(fd);
		return;
	}
	int afd = make_beside(path, aside, sizeof(aside));
	const char *base = strrchr(aside, '/');
	base = base ? base + 1 : aside;
	if (afd >= 0 && strlen(base) < len && rename(path, aside) == 0) {
		uint32_t state = RECCE_PROC_EXECED;
		pwrite(fd, &state, sizeof(state), offsetof(struct recce_file_header, state));
		memcpy(name, base, strlen(base) + 1);
	} else if (afd >= 0)
		unlink(aside);
	if (afd >= 0)
		close(afd);
	close(fd);
}

int file_create(unsigned threads, unsigned ring_events, const char *dir)
{
	uint64_t index_off = RECCE_HEADER_SIZE;
	uint64_t names_off = index_off + NAME_SLOTS * sizeof(uint32_t);
	uint64_t slots_off = recce_align(names_off + NAMES_SIZE, 4096);
	uint64_t slot_size = recce_align(
	    RECCE_SLOT_RECORDS_AT + (uint64_t)ring_events * sizeof(struct recce_record), 4096);
	uint64_t size = slots_off + (uint64_t)threads * slot_size;
	char tmp[sizeof(lib.path) + 16];
	int err;

	if (snprintf(lib.path, sizeof(lib.path), "%s/recce-%d.events", dir, (int)getpid()) >=
	    (int)sizeof(lib.path))
		return -ENAMETOOLONG;
	remove_stale(dir);
	int fd = make_beside(lib.path, tmp, sizeof(tmp));
	if (fd < 0)
		return -errno;
	fchmod(fd, 0600);
	if (ftruncate(fd, (off_t)size) != 0) {
		err = errno;
		goto out_unlink;
	}
	err = posix_fallocate(fd, 0, (off_t)slots_off);
	if (err)
		goto out_unlink;
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto out_unlink;
	}
	void *writers = mmap(NULL, threads * sizeof(struct writer), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (writers == MAP_FAILED) {
		err = errno;
		munmap(map, size);
		goto out_unlink;
	}

	struct recce_file_header *h = map;
	h->version = RECCE_FILE_VERSION;
	h->min_version = RECCE_FILE_MIN_VERSION;
	h->header_size = RECCE_HEADER_SIZE;
	h->file_size = size;
	fill_identity(h);
	h->slots = threads;
	h->ring_records = ring_events;
	h->record_size = sizeof(struct recce_record);
	h->slot_size = (uint32_t)slot_size;
	h->slots_offset = slots_off;
	h->index_offset = index_off;
	h->name_slots = NAME_SLOTS;
	h->names_size = NAMES_SIZE;
	h->names_offset = names_off;
	h->names_used = 8; /* offset 0 means "no name" */
	h->clock = lib.use_tsc ? RECCE_CLOCK_TSC : RECCE_CLOCK_MONOTONIC;
	clock_pair(&h->tsc0, &h->mono0);
	h->real0 = mono_ns(CLOCK_REALTIME);
	if (!lib.use_tsc)
		h->tsc_hz = 1000000000ULL;
	h->state = RECCE_PROC_RUNNING;
	set_aside_before_exec(lib.path, h, h->before_exec, sizeof(h->before_exec));
	/* The magic last: a reader that sees it sees the rest. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, RECCE_FILE_MAGIC, sizeof(h->magic));

	if (rename(tmp, lib.path) != 0) {
		err = errno;
		/* Another user's file holds the name, which a sticky
		 * directory keeps from us: the file keeps its random name,
		 * one only this process could make, and readers find it
		 * through the maps of the process. */
		if ((err == EPERM || err == EACCES) && strlen(tmp) < sizeof(lib.path)) {
			memcpy(lib.path, tmp, strlen(tmp) + 1);
			err = 0;
		} else {
			munmap(writers, threads * sizeof(struct writer));
			munmap(map, size);
			goto out_unlink;
		}
	}
	lib.fd = fd;
	lib.hdr = h;
	lib.map_size = size;
	lib.index = (uint32_t *)((char *)map + index_off);
	lib.names = (char *)map + names_off;
	lib.writers = writers;
	lib.nslots = threads;
	return 0;

out_unlink:
	unlink(tmp);
	close(fd);
	lib.path[0] = '\0';
	return -err;
}

/* The pages of slot index's ring, reserved before its thread writes. */
int file_slot_reserve(unsigned index)
{
	struct recce_file_header *h = lib.hdr;
	int err = posix_fallocate(lib.fd, (off_t)(h->slots_offset + (uint64_t)index * h->slot_size),
				  h->slot_size);
	return -err;
}

/*
 * A second pair of clock readings, once the process has run for a fifth
 * of a second, so the reader can turn ticks into time without measuring
 * the clock itself (after a crash, or on another machine).
 */
void file_calibrate(void)
{
	struct recce_file_header *h = lib.hdr;

	if (!h || !lib.use_tsc)
		return;
	uint64_t mono = 0, tsc = 0;
	clock_pair(&tsc, &mono);
	if (mono <= h->mono0 + 200000000ULL || tsc <= h->tsc0)
		return;
	unsigned __int128 hz = (unsigned __int128)(tsc - h->tsc0) * 1000000000u / (mono - h->mono0);
	__atomic_store_n(&h->tsc1, tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&h->mono1, mono, __ATOMIC_RELAXED);
	__atomic_store_n(&h->tsc_hz, (uint64_t)hz, __ATOMIC_RELEASE);
}

/* At a clean exit: the header says so, and the file goes unless kept. */
void file_exit(void)
{
	if (__atomic_load_n(&lib.state, __ATOMIC_ACQUIRE) != LIB_READY || lib.hdr->pid != getpid())
		return;
	file_calibrate();
	__atomic_store_n(&lib.hdr->exit_time, clock_read(), __ATOMIC_RELAXED);
	__atomic_store_n(&lib.hdr->state, RECCE_PROC_EXITED, __ATOMIC_RELEASE);
	if (!lib.keep) {
		unlink(lib.path);
		/* And the one of the program before an exec, kept for now:
		 * by a name of this process's files only. */
		char name[sizeof(lib.hdr->before_exec) + 1];
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(lib.hdr->before_exec),
			 lib.hdr->before_exec);
		if (recce_events_name_pid(name) == getpid()) {
			char old[sizeof(lib.path) + sizeof(name)];
			const char *slash = strrchr(lib.path, '/');
			int dir_len = slash ? (int)(slash - lib.path) : 0;
			snprintf(old, sizeof(old), "%.*s/%s", dir_len, lib.path, name);
			unlink(old);
		}
	}
}

/* In the child of a fork: the parent's file is the parent's. */
void file_forget(void)
{
	if (lib.hdr) {
		munmap(lib.writers, lib.nslots * sizeof(struct writer));
		munmap(lib.hdr, lib.map_size);
		close(lib.fd);
	}
	lib.hdr = NULL;
	lib.writers = NULL;
	lib.index = NULL;
	lib.names = NULL;
	lib.nslots = 0;
	lib.path[0] = '\0';
	lib.status = -EAGAIN;
	__atomic_store_n(&lib.state, LIB_NEW, __ATOMIC_RELEASE);
}
