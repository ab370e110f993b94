/*
 * Protobuf wire format reading (see pb-wire.h), after the encoding rules
 * of protobuf's documentation: a tag varint (field number << 3 | wire
 * type), then a varint, 8 or 4 little-endian bytes, or a length varint
 * and that many bytes.
 */
#include "profile/pb-wire.h"

#include <errno.h>
#include <string.h>

#include "util/varint.h"

int pb_next(struct pb_reader *r, struct pb_field *f)
{
	uint64_t tag;

	if (r->at == r->end)
		return 0;
	if (varint_read(&r->at, r->end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
		return -EBADMSG;
	memset(f, 0, sizeof(*f));
	f->num = (uint32_t)(tag >> 3);
	f->wire = (uint8_t)(tag & 7);
	size_t left = (size_t)(r->end - r->at);
	switch (f->wire) {
	case PB_VARINT:
		return varint_read(&r->at, r->end, &f->value) ? -EBADMSG : 1;
	case PB_I64:
	case PB_I32: {
		size_t n = f->wire == PB_I64 ? 8 : 4;
		if (left < n)
			return -EBADMSG;
		memcpy(&f->value, r->at, n); /* little-endian, as x86-64 */
		r->at += n;
		return 1;
	}
	case PB_LEN: {
		uint64_t len;
		if (varint_read(&r->at, r->end, &len) || len > (uint64_t)(r->end - r->at))
			return -EBADMSG;
		f->data = r->at;
		f->len = (size_t)len;
		r->at += len;
		return 1;
	}
	default:
		return -EBADMSG;
	}
}
