/*
 * An ELF file's GNU build-id (see elf-build-id.h): the PT_NOTE segments
 * walked with libelf, the file read as untrusted input.
 */
#include "symbols/elf-build-id.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "util/hex.h"

/* The id in one note segment's data: 1 when found and it fit. */
static int note_id(Elf_Data *data, char *hex, size_t cap)
{
	GElf_Nhdr nh;
	size_t at = 0, next, name_at, desc_at;

	while ((next = gelf_getnote(data, at, &nh, &name_at, &desc_at)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_at, "GNU", 4) == 0) {
			if (nh.n_descsz == 0 || 2 * (size_t)nh.n_descsz + 1 > cap)
				return 0;
			hex_of((const uint8_t *)data->d_buf + desc_at, nh.n_descsz, hex);
			return 1;
		}
		at = next;
	}
	return 0;
}

int elf_build_id(int fd, char *hex, size_t cap)
{
	size_t phnum;
	int found = 0;

	if (cap)
		hex[0] = '\0';
	if (!cap || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !found; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			/* Notes in an 8-aligned segment (GNU properties) are
			 * laid out on 8 bytes. */
			Elf_Data *data =
			    elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			found = data && note_id(data, hex, cap);
		}
	}
	elf_end(elf);
	return found;
}
