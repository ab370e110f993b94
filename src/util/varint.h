/*
 * Reading an unsigned LEB128 varint (7 bits a byte, low first, the high
 * bit set on all but the last): the encoding of protobuf's integers, of
 * DWARF's and .eh_frame's, and of recce's sample timeline. At most ten
 * bytes; never reads past end.
 */
#ifndef RECCE_UTIL_VARINT_H
#define RECCE_UTIL_VARINT_H

#include <errno.h>
#include <stdint.h>

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
