/*
 * The process registry: for every process recce watches, the executable
 * mappings of its address space, kept up to date from PERF_RECORD_MMAP2,
 * FORK, COMM (exec) and EXIT records. Each file-backed mapping holds an
 * open sym_file, so addresses can still be symbolized after the process
 * exits or its binary is deleted or replaced.
 *
 * Ownership: procs_new() returns a heap object freed by procs_free(); it
 * borrows the symbolizer, which must outlive it. Returned maps stay valid
 * until the next change to that process.
 */
#ifndef RECCE_PROC_MAPS_H
#define RECCE_PROC_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct sym_file;
struct proc_registry;

struct proc_map {
	uint64_t start, end, pgoff;
	/* The file path, "[vdso]" or "//anon": as the kernel names it, but
	 * for a program run through a symlink the name it was run by
	 * (exe-name.h), which real_path then differs from. */
	const char *path;
	const char *real_path; /* as the kernel names it */
	struct sym_file *file; /* NULL when not an ELF file we could open (anon, JIT) */
	/* Without a file: the build-id the kernel gave with the mapping, so
	 * that a profile can be named later from the binary; else NULL. */
	const char *build_id;
	int prot;	       /* PROT_* bits */
};

struct proc_registry *procs_new(struct symbolizer *sym);

/* Parses one line of /proc/PID/maps, "START-END PERMS OFFSET MAJ:MIN
 * INODE [PATH]", into m's range, protection and offset, *inode and *path
 * (pointing into line). Returns 1 if well formed, else 0. */
int proc_maps_parse_line(const char *line, struct proc_map *m, uint64_t *inode, const char **path);
void procs_free(struct proc_registry *r);

/* Reads /proc/PID/maps and registers every executable mapping, opening
 * files through /proc/PID/map_files/ when possible. Also records the
 * process's uid and command name. Returns 0, -ESRCH if it does not exist. */
int procs_scan(struct proc_registry *r, pid_t pid);

/* A new mapping from a PERF_RECORD_MMAP2 record (non-executable ones are
 * ignored). build_id, the record's (lowercase hex; NULL or "" for none),
 * is what the file must be: when the process is gone and the path holds
 * another file or none, the file is the one open with that build-id, or
 * the symbol cache's table of it (symbolizer_open_gone()). Returns 0 or
 * -errno; an unopenable file is kept without a sym_file, not an error. */
int procs_mmap(struct proc_registry *r, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	       const char *path, int prot, const char *build_id);

/* The child starts with a copy of the parent's mappings. */
int procs_fork(struct proc_registry *r, pid_t parent, pid_t child);

/* An exec replaced the address space: drop all mappings of pid. */
void procs_exec(struct proc_registry *r, pid_t pid);

/* The mapping of pid that contains addr, or NULL. */
const struct proc_map *procs_find(struct proc_registry *r, pid_t pid, uint64_t addr);

/* All mappings of pid in address order; returns the count. */
size_t procs_maps(struct proc_registry *r, pid_t pid, const struct proc_map **maps);

/* The address in pid of vaddr of file f, through the executable mapping
 * that holds it: 0, or -ENOENT when none does. */
int procs_file_addr(struct proc_registry *r, pid_t pid, struct sym_file *f, uint64_t vaddr,
		    uint64_t *addr);

/* The mapping of pid's program: its lowest file mapping (the program
 * is mapped below its libraries and the loader), or NULL. */
const struct proc_map *procs_exe(struct proc_registry *r, pid_t pid);

/* What pid runs, for labelling its samples: the path and build-id ("" for
 * none) of its program's mapping, else of the program it was noted
 * running. Returns 1, or 0 when neither is known (both ""). */
int procs_program(struct proc_registry *r, pid_t pid, const char **path, const char **build_id);

/*
 * Notes a running process not yet registered: its command name, and the
 * program it runs with its build-id, but not its mappings (procs_scan()
 * reads them when it is first sampled). A sampler of every process notes
 * them all as it starts, so that one that ends before its samples are
 * read, and so before it can be scanned, is still named. Returns 0,
 * -ESRCH when it is gone, or -ENOMEM.
 */
int procs_note(struct proc_registry *r, pid_t pid);

/* Drops every process found gone by the call before, with its mappings
 * (the continuous agent calls it once a window, after naming its
 * samples: the last samples of a process that exits may be read in the
 * next window), so that a registry that lives for days holds the
 * processes alive. Returns how many with mappings were dropped. */
size_t procs_forget_dead(struct proc_registry *r);

/* Marks the file of every mapping it holds as in use, for
 * symbolizer_sweep(). */
void procs_mark_files(struct proc_registry *r);

/* The uid that owns pid (from the scan), or (uid_t)-1 if unknown. */
uid_t procs_uid(struct proc_registry *r, pid_t pid);

/* The command name (comm) of pid, or NULL. */
const char *procs_comm(struct proc_registry *r, pid_t pid);
int procs_set_comm(struct proc_registry *r, pid_t pid, const char *comm);

/* The symbolizer the registry opens files through. */
struct symbolizer *procs_symbolizer(const struct proc_registry *r);

/* The table of Python frames in the stacks of these processes
 * (py-names.h), made on first use; NULL when out of memory. */
struct py_names;
struct py_names *procs_py_names(struct proc_registry *r);

#endif
