/*
 * Command lines as a shell reads them: words joined by spaces, each quoted
 * only when it must be, so that a profile's "command:" and "recorded-by:"
 * lines can be pasted back into a terminal and run the same command.
 */
#ifndef RECCE_UTIL_SHELL_H
#define RECCE_UTIL_SHELL_H

#include <stddef.h>

/*
 * The argc words of argv joined by spaces after prefix (unquoted; NULL for
 * none). A word of letters, digits and _@%+=:,./- stays as it is; any other
 * (or an empty one) is put in single quotes, a quote inside written '\''.
 * A new string, or NULL when out of memory.
 */
char *shell_join(const char *prefix, const char *const *argv, size_t argc);

#endif
