/*
 * The name a program was run by. Debian installs some programs as a
 * symlink to another (redis-server is redis-check-rdb), and the kernel's
 * maps and /proc/PID/exe give the file the link points to, so a profile
 * would name a program its user never ran. The command name (comm) and
 * argv[0] keep the name that was run: when one of them names, in the
 * process's own mount namespace, the very file /proc/PID/exe is (same
 * device and inode), that path is the program's name for people.
 *
 * comm and argv[0] are the target's to change: a name is only ever taken
 * when it leads to the same file, so a hostile target can at most choose
 * among the names of its own executable.
 */
#ifndef RECCE_PROC_EXE_NAME_H
#define RECCE_PROC_EXE_NAME_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Fills real (rcap bytes) with the path /proc/PID/exe gives, and as_run
 * (acap bytes) with the path the program was run by when that differs.
 * Returns 1 when as_run was filled, 0 when the program goes by its real
 * name (or no other name could be verified), -errno when the process's
 * executable cannot be read (gone, or not ours to look at).
 */
int exe_name_as_run(pid_t pid, char *real, size_t rcap, char *as_run, size_t acap);

/* Whether a file's base name is the command name comm as the kernel keeps
 * it: whole, or cut at 15 bytes. A program whose file is not named by its
 * comm may have been run through a symlink. */
int exe_name_is_comm(const char *base, const char *comm);

#endif
