/*
 * Finding a struct member's offset in BTF (see btf.h). Every type record
 * is a struct btf_type followed by data whose size its kind gives; the
 * walk checks each against the section's end, so a truncated or foreign
 * file fails with -EBADMSG rather than being read past.
 */
#include "perf/btf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/readall.h"

#define BTF_MAX_FILE (64u << 20) /* vmlinux's is about 5 MiB */

/* The bytes of data that follow a type record of this kind with vlen
 * entries, or -1 for a kind this reader does not know. */
static long extra_bytes(unsigned kind, unsigned vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * 12;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

/* The NUL-terminated name at off in the string section, or NULL. */
static const char *name_at(const char *strs, size_t len, uint32_t off)
{
	if (off >= len || !memchr(strs + off, 0, len - off))
		return NULL;
	return strs + off;
}

int btf_member_offset(const void *data, size_t len, const char *strct, const char *member,
		      uint32_t *offset)
{
	struct btf_header h;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) || h.hdr_len > len ||
	    h.type_off > len - h.hdr_len || h.type_len > len - h.hdr_len - h.type_off ||
	    h.str_off > len - h.hdr_len || h.str_len > len - h.hdr_len - h.str_off)
		return -EBADMSG;
	const unsigned char *p = (const unsigned char *)data + h.hdr_len + h.type_off;
	const unsigned char *end = p + h.type_len;
	const char *strs = (const char *)data + h.hdr_len + h.str_off;

	while (p < end) {
		struct btf_type t;
		if ((size_t)(end - p) < sizeof(t))
			return -EBADMSG;
		memcpy(&t, p, sizeof(t));
		p += sizeof(t);
		unsigned kind = BTF_INFO_KIND(t.info), vlen = BTF_INFO_VLEN(t.info);
		long extra = extra_bytes(kind, vlen);
		if (extra < 0 || (size_t)(end - p) < (size_t)extra)
			return -EBADMSG;
		const char *name = name_at(strs, h.str_len, t.name_off);
		if (kind == BTF_KIND_STRUCT && name && strcmp(name, strct) == 0 && vlen) {
			for (unsigned i = 0; i < vlen; i++) {
				struct btf_member m;
				memcpy(&m, p + i * sizeof(m), sizeof(m));
				const char *mn = name_at(strs, h.str_len, m.name_off);
				if (!mn || strcmp(mn, member) != 0)
					continue;
				/* With kflag the high byte is a bit-field's size. */
				uint32_t bits = BTF_INFO_KFLAG(t.info)
						    ? BTF_MEMBER_BIT_OFFSET(m.offset)
						    : m.offset;
				if (bits % 8 ||
				    (BTF_INFO_KFLAG(t.info) && BTF_MEMBER_BITFIELD_SIZE(m.offset)))
					return -ENOENT;
				*offset = bits / 8;
				return 0;
			}
			return -ENOENT;
		}
		p += extra;
	}
	return -ENOENT;
}

int btf_file_member_offset(const char *path, const char *strct, const char *member,
			   uint32_t *offset)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *data;
	size_t len;

	if (fd < 0)
		return -errno;
	int err = read_all(fd, BTF_MAX_FILE, &data, &len);
	close(fd);
	if (err)
		return err;
	err = btf_member_offset(data, len, strct, member, offset);
	free(data);
	return err;
}
