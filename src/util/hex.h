/*
 * Bytes as lowercase hex digits and back: build-ids, tokens, the code
 * bytes a patch registry keeps.
 */
#ifndef RECCE_UTIL_HEX_H
#define RECCE_UTIL_HEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The n bytes at b as 2 * n digits and a NUL into out (2 * n + 1 bytes). */
static inline void hex_of(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static inline int hex_digit(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Exactly 2 * n hex digits in s into the n bytes at b: 0, or -1. */
static inline int hex_bytes(const char *s, uint8_t *b, size_t n)
{
	if (strnlen(s, 2 * n + 1) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

#endif
