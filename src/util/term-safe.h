/*
 * Names from a target (symbols, perf maps, DWARF) made safe for a
 * terminal: a target controls them, and a name holding ESC or BEL could
 * retitle the terminal, clear it or worse when printed raw. C0 controls
 * and DEL become \xNN; the C1 controls U+0080..U+009F (UTF-8 c2 80 to
 * c2 9f), which some terminals also obey, become \u00NN. Every other byte,
 * UTF-8 text included, is kept. JSON output escapes on its own.
 */
#ifndef RECCE_UTIL_TERM_SAFE_H
#define RECCE_UTIL_TERM_SAFE_H

#include <stddef.h>
#include <stdio.h>

/* Whether s holds nothing to escape. */
int term_clean(const char *s);

/* s itself when clean, else its escaped form in buf[cap] (cut short, and
 * always NUL-terminated, if it does not fit). */
const char *term_safe(const char *s, char *buf, size_t cap);

/* Writes s escaped to out. */
void term_fputs(const char *s, FILE *out);

#endif
