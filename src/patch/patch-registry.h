/*
 * Where the patches live in a process are written down, so that `recce
 * patch --list` and `--undo` find them after the recce that made them has
 * gone: one file per process, DIR/PID-STARTTIME (the start time tells a
 * reused pid apart), one line per patch with the bytes it replaced, the
 * bytes it wrote and what it redirects to. Each change rewrites the file
 * whole (a new file renamed over the old one); the last undo removes it.
 *
 * Ownership: patch_registry_load() returns a heap array the caller frees.
 */
#ifndef RECCE_PATCH_PATCH_REGISTRY_H
#define RECCE_PATCH_PATCH_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PATCH_BYTES 16

struct patch_record {
	char func[256]; /* the replaced function, as the user named it */
	uint64_t addr;	/* its entry in the process */
	uint32_t len;	/* bytes replaced there */
	uint8_t orig[PATCH_BYTES], code[PATCH_BYTES];
	uint64_t veneer;   /* the far jump the entry jumps to, 0: none */
	char lib[1024];	   /* the object loaded, absolute */
	char newfunc[256]; /* the function called instead */
	uint64_t new_addr;
	int64_t since; /* seconds since the epoch */
	uid_t uid;     /* who made it */
	pid_t from;    /* not written: the ancestor whose patch a child inherited, 0 */
};

/* The registry file of pid under dir. Returns 0, -ESRCH, or -ENAMETOOLONG. */
int patch_registry_path(const char *dir, pid_t pid, char *buf, size_t len);

/* Reads pid's patches (none when there is no file). Returns 0, -EBADMSG
 * for a line that does not parse, or -errno. */
int patch_registry_load(const char *dir, pid_t pid, struct patch_record **v, size_t *n);

/* Writes pid's patches, creating dir (0700) if needed; n == 0 removes
 * the file. Returns 0 or -errno. */
int patch_registry_save(const char *dir, pid_t pid, const struct patch_record *v, size_t n);

#endif
