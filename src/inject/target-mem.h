/*
 * A target's memory and mappings as recce changes them: reads and writes
 * through /proc/PID/mem, which writes even into read-only code (the
 * kernel copies the page for that process alone), so the target's code
 * is never made writable; and every line of /proc/PID/maps, for the
 * stacks, the gaps and the named pages that injection and patching look
 * for.
 *
 * Ownership: tmaps_read() fills a caller-owned struct tmaps, freed by
 * tmaps_release().
 */
#ifndef RECCE_INJECT_TARGET_MEM_H
#define RECCE_INJECT_TARGET_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads or writes len bytes at addr of pid: 0, or -errno (-EFAULT when
 * only part of it could be). */
int tmem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int tmem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Reads a NUL-terminated string at addr into buf (cap bytes, cut there). */
int tmem_read_string(pid_t pid, uint64_t addr, char *buf, size_t cap);

struct tmap {
	uint64_t start, end, pgoff;
	int prot;	  /* PROT_* bits */
	const char *path; /* "" for an anonymous mapping; "[stack]", "[anon:NAME]" */
};

struct tmaps {
	struct tmap *v;
	size_t n;
	char *text; /* the file the paths point into */
};

/* Reads /proc/PID/maps. Returns 0, -ESRCH, or -errno. */
int tmaps_read(struct tmaps *m, pid_t pid);
void tmaps_release(struct tmaps *m);

/* The mapping holding addr, or NULL. */
const struct tmap *tmaps_find(const struct tmaps *m, uint64_t addr);

/* Whether path's last component starts with prefix ("libc.so"). */
int tmap_is(const struct tmap *m, const char *prefix);

#endif
