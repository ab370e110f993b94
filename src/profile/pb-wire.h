/*
 * The protobuf wire format, one field at a time: what lets the pprof
 * reader walk a Profile message in place, counting and checking its
 * elements before it decodes any, instead of unpacking the whole message
 * into one allocation per element (tens of bytes of memory per byte of a
 * hostile file). Nothing here allocates.
 */
#ifndef RECCE_PB_WIRE_H
#define RECCE_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb_field {
	uint32_t num;	     /* field number, >= 1 */
	uint8_t wire;	     /* enum pb_wire */
	uint64_t value;	     /* PB_VARINT, PB_I64, PB_I32 */
	const uint8_t *data; /* PB_LEN: the bytes, in the message */
	size_t len;
};

struct pb_reader {
	const uint8_t *at, *end;
};

static inline struct pb_reader pb_reader(const void *data, size_t len)
{
	return (struct pb_reader){data, (const uint8_t *)data + len};
}

/* The next field of r into *f: 1, 0 at the end of the message, or
 * -EBADMSG when the bytes are not a field (a bad tag or varint, a length
 * past the end, a group, which proto3 does not have). */
int pb_next(struct pb_reader *r, struct pb_field *f);

#endif
