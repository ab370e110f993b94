/*
 * Reading untrusted text files (perf maps, kallsyms, /proc files) line by
 * line with a fixed buffer: a line longer than the buffer is skipped whole
 * instead of growing memory, and numbers are parsed without the surprises
 * of strtoull (no sign, no leading space, overflow is an error).
 */
#ifndef RECCE_LINES_H
#define RECCE_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads the next line of f into buf (size >= 2) without its newline.
 * Returns 1 for a line, 0 at the end of the file, and -1 for a line that
 * does not fit: its remainder is consumed and buf holds nothing useful. */
int lines_read(FILE *f, char *buf, size_t size);

/* Parses a hexadecimal number at *p, with an optional 0x prefix, and moves
 * *p past it. Returns 0, -EINVAL if no digit is there, -ERANGE if it does
 * not fit in 64 bits. */
int lines_parse_hex(const char **p, uint64_t *out);

/* The same for a decimal number. */
int lines_parse_dec(const char **p, uint64_t *out);

/* Moves *p past spaces and tabs; returns how many it skipped. */
size_t lines_skip_blanks(const char **p);

/* Reads up to n decimal numbers after "KEY:" on the first line of the file
 * at path that starts so (a /proc status file's "Uid:\t0\t0\t0\t0").
 * Returns how many it read, 0 when no line has the key or no number
 * follows, -errno when the file cannot be opened. */
int lines_key_numbers(const char *path, const char *key, uint64_t *v, int n);

#endif
