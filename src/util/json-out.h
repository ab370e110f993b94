/*
 * Writing JSON by hand, for the speedscope and Chrome trace writers: a
 * string with every character JSON requires escaped, and bytes that are
 * not valid UTF-8 (names come from the target's binaries, so they are
 * untrusted) replaced by U+FFFD, so the file always parses.
 */
#ifndef RECCE_JSON_OUT_H
#define RECCE_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

/* Writes s as a quoted JSON string. */
void json_put_string(FILE *out, const char *s);

/* Writes ns nanoseconds as microseconds with three decimals (the Trace
 * Event format's unit), in any locale. */
void json_put_us(FILE *out, int64_t ns);

#endif
