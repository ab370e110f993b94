/*
 * The kernel's own description of its types (BTF, /sys/kernel/btf/vmlinux),
 * read for the one thing a hand-written BPF program needs from it: where a
 * member sits in a kernel structure (the tgid in a task_struct), which
 * differs between kernel builds. Only the type section is walked; nothing
 * is kept.
 */
#ifndef RECCE_BTF_H
#define RECCE_BTF_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's BTF file. */
#define BTF_VMLINUX "/sys/kernel/btf/vmlinux"

/*
 * The byte offset of member `member` of struct `strct` in the BTF data of
 * len bytes at data. Returns 0 and *offset, -ENOENT when there is no such
 * struct or member (or the member is a bit-field), -EBADMSG when the data
 * is malformed or holds a kind this reader does not know.
 */
int btf_member_offset(const void *data, size_t len, const char *strct, const char *member,
		      uint32_t *offset);

/* The same, from the file at path (BTF_VMLINUX): -errno when it cannot be
 * read. */
int btf_file_member_offset(const char *path, const char *strct, const char *member,
			   uint32_t *offset);

#endif
