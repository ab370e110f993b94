/*
 * A process's family as /proc shows it now: its parent, and every
 * process descended from it (children, their children...), for what a
 * child inherits at fork, such as a patch; the one that traces it; and
 * whether anyone outside a family maps a file.
 *
 * Ownership: proc_descendants() returns a heap array the caller frees.
 */
#ifndef RECCE_PROC_FAMILY_H
#define RECCE_PROC_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The process tracing pid under ptrace (a debugger, strace), 0 for none,
 * or -errno. */
pid_t proc_tracer(pid_t pid);

/* pid's parent, 0 for none, or -errno (-ESRCH: gone). */
pid_t proc_parent(pid_t pid);

/* Every live process descended from root (root left out). Returns 0 or
 * -errno. */
int proc_descendants(pid_t root, pid_t **v, size_t *n);

/* A file as the kernel knows it (stat's st_dev and st_ino). */
struct proc_file_id {
	uint64_t dev, ino;
};

/* Whether process pid maps (in any mapping, or with exec only in an
 * executable one) one of the nfiles files, *which of them: 1, 0, or
 * -errno (-ESRCH also for a process that has no memory: one on its way
 * out, its maps already empty; -EACCES for maps even root may not read,
 * in some sandboxes). */
int proc_maps_files(pid_t pid, const struct proc_file_id *files, size_t nfiles, int exec,
		    size_t *which);

/* The first live process, not one of the n in family, that maps one of
 * the nfiles files executable (code it may run; a file mapped to be read,
 * as a profiler reads a program's symbols, runs nothing), *which of them.
 * A process whose maps even root may not read (EACCES: the supervisor of
 * a sandbox) is left out. Returns that pid, 0 when there is none, or
 * -errno. */
pid_t proc_file_outsider(const struct proc_file_id *files, size_t nfiles, const pid_t *family,
			 size_t n, size_t *which);

#endif
