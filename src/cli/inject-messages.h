/*
 * The words for what stops recce from loading code into a process,
 * shared by `recce patch` and `recce trace --fast`.
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

#endif
