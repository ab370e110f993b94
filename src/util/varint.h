/*
 * Unsigned LEB128 varints (7 bits a byte, low first, the high bit set on
 * all but the last): the encoding of protobuf's integers, of DWARF's and
 * .eh_frame's, and of recce's sample timelines and trace files. At most
 * ten bytes (VARINT_MAX); the reader never reads past end. Signed values
 * go through zig-zag first (0, -1, 1, -2... as 0, 1, 2, 3...), so that
 * small deltas of either sign take one byte.
 */
#ifndef RECCE_UTIL_VARINT_H
#define RECCE_UTIL_VARINT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10

/* Writes v at p (VARINT_MAX bytes of room); returns the bytes written. */
static inline size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* The varint at *at (before end) into *v, advancing *at past it: 0, or
 * -EBADMSG when it runs past end or over ten bytes (*at is then left). */
static inline int varint_read(const uint8_t **at, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *at;
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p == end)
			return -EBADMSG;
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*at = p;
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

#endif
