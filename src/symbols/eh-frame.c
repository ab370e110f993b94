/*
 * .eh_frame parsing (see eh-frame.h), after the Linux Standard Base's
 * description of the section: a sequence of length-prefixed entries, each
 * a CIE (id 0), whose augmentation data says how its FDEs encode
 * addresses ('R'), or an FDE (id: the distance back to its CIE) starting
 * with its initial location and address range in that encoding.
 */
#include "symbols/eh-frame.h"

#include <errno.h>
#include <string.h>

#include "util/u64map.h"
#include "util/varint.h"

#define PE_OMIT	  0xff
#define PE_FORMAT 0x0f
#define PE_PCREL  0x10

/* A cursor over [p, end). */
struct cur {
	const uint8_t *p, *end;
};

static int get(struct cur *c, void *v, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(v, c->p, n);
	c->p += n;
	return 0;
}

/* An unsigned or (sign) signed LEB128 number at c. */
static int leb(struct cur *c, uint64_t *v, int sign)
{
	const uint8_t *start = c->p;

	if (varint_read(&c->p, c->end, v))
		return -1;
	unsigned bits = 7 * (unsigned)(c->p - start);
	if (sign && bits < 64 && (c->p[-1] & 0x40))
		*v |= ~0ULL << bits;
	return 0;
}

/* A pointer in encoding enc at c, whose own address is at. Returns 0, or
 * -1 for an encoding recce does not decode or bytes past the end. */
static int pointer(struct cur *c, uint8_t enc, uint64_t at, uint64_t *v)
{
	uint16_t u16;
	uint32_t u32;
	uint64_t x;

	switch (enc & PE_FORMAT) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		if (get(c, &x, 8))
			return -1;
		break;
	case 0x01:
		if (leb(c, &x, 0))
			return -1;
		break;
	case 0x09:
		if (leb(c, &x, 1))
			return -1;
		break;
	case 0x02:
	case 0x0a:
		if (get(c, &u16, 2))
			return -1;
		x = (enc & PE_FORMAT) == 0x0a ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		break;
	case 0x03:
	case 0x0b:
		if (get(c, &u32, 4))
			return -1;
		x = (enc & PE_FORMAT) == 0x0b ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		break;
	default:
		return -1;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		x += at;
		break;
	default:
		return -1; /* textrel, datarel, funcrel, aligned: not in .eh_frame */
	}
	*v = x;
	return 0;
}

/* The FDE pointer encoding of the CIE in c (after its id), or -1. */
static int cie_encoding(struct cur c)
{
	uint8_t version, enc = 0; /* absptr when there is no 'R' */
	uint64_t skip;

	if (get(&c, &version, 1))
		return -1;
	const char *aug = (const char *)c.p;
	const uint8_t *nul = memchr(c.p, 0, (size_t)(c.end - c.p));
	if (!nul)
		return -1;
	c.p = nul + 1;
	if (leb(&c, &skip, 0) || leb(&c, &skip, 1))
		return -1; /* code and data alignment */
	if (version == 1 ? get(&c, &version, 1) : leb(&c, &skip, 0))
		return -1; /* return address register */
	if (aug[0] != 'z')
		return aug[0] ? -1 : 0;
	uint64_t auglen;
	if (leb(&c, &auglen, 0) || auglen > (uint64_t)(c.end - c.p))
		return -1;
	struct cur a = {c.p, c.p + auglen};
	for (const char *s = aug + 1; *s; s++) {
		uint8_t b;
		uint64_t personality;
		switch (*s) {
		case 'R':
			if (get(&a, &enc, 1))
				return -1;
			break;
		case 'L':
			if (get(&a, &b, 1))
				return -1;
			break;
		case 'P':
			if (get(&a, &b, 1) || pointer(&a, b & 0x7f, 0, &personality))
				return -1;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return enc; /* the rest is not needed once 'R' is read */
		}
	}
	return enc;
}

long eh_frame_ranges(const uint8_t *data, size_t len, uint64_t addr, struct ranges *out)
{
	struct u64map cies; /* CIE offset -> encoding + 1, or 0 if not decodable */
	struct cur c = {data, data + len};
	long added = 0;

	u64map_init(&cies);
	while (c.p < c.end && (size_t)added < EH_FRAME_MAX_FDES) {
		const uint8_t *entry = c.p;
		uint32_t len32, id;
		if (get(&c, &len32, 4) || len32 == 0 || len32 == 0xffffffff ||
		    len32 > (size_t)(c.end - c.p))
			break; /* the terminator, a 64-bit entry, or the end */
		struct cur e = {c.p, c.p + len32};
		c.p += len32;
		const uint8_t *id_at = e.p;
		if (get(&e, &id, 4))
			break;
		if (id == 0) {
			int enc = cie_encoding(e);
			if (u64map_put(&cies, (uint64_t)(entry - data), (uint64_t)(enc + 1)) < 0) {
				added = -ENOMEM;
				break;
			}
			continue;
		}
		if (id > (size_t)(id_at - data))
			continue; /* a CIE before the section */
		uint64_t enc1 = 0;
		if (!u64map_get(&cies, (uint64_t)(id_at - id - data), &enc1) || !enc1)
			continue; /* no such CIE, or one recce cannot read */
		uint8_t enc = (uint8_t)(enc1 - 1);
		uint64_t start, length;
		uint64_t at = addr + (uint64_t)(e.p - data);
		if (enc == PE_OMIT || pointer(&e, enc, at, &start) ||
		    pointer(&e, enc & PE_FORMAT, 0, &length) || length == 0 ||
		    start + length < start)
			continue;
		int rc = ranges_add(out, start, start + length, 0, 0);
		if (rc < 0) {
			added = rc;
			break;
		}
		added++;
	}
	u64map_release(&cies);
	return added;
}
