/*
 * The words for what stops recce from loading code into a process,
 * shared by `recce patch`, `recce trace --fast` and `recce record -e alloc
 * --fast`.
 */
#ifndef RECCE_CLI_INJECT_MESSAGES_H
#define RECCE_CLI_INJECT_MESSAGES_H

#include <sys/types.h>

#include "inject/inject.h"

/* Why injection was refused, as the end of a sentence. */
const char *inject_words(enum inject_refusal why);

/* "another recce (process N)", or "another recce" when N is 0; a static
 * buffer. */
const char *inject_holder_words(pid_t holder);

/* For ptrace's own errors (-EPERM, -EACCES, -ESRCH, -EBUSY): one message
 * that says what to do, and exit status 1. Returns for any other. */
void inject_die_errno(pid_t pid, int err);

/* The library of --fast (inject/fast-set.h) could not be loaded into
 * process pid or started, as fi says: one error message, the command
 * (trace, record) named in its advice. */
struct fast_set_info;
void fast_say_failed(const struct fast_set_info *fi, int err, pid_t pid, const char *cmd);

#endif
