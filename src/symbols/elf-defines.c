/*
 * Whether an ELF file defines a symbol (see elf-defines.h): every symbol
 * table is walked once with libelf, the file read as untrusted input.
 */
#include "symbols/elf-defines.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

int elf_defines(int fd, const char *name)
{
	int found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize == 0 ||
		    (data = elf_getdata(scn, NULL)) == NULL)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n && !found; i++) {
			GElf_Sym sym;
			const char *s;
			if (gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (s = elf_strptr(elf, sh.sh_link, sym.st_name)) != NULL)
				found = strcmp(s, name) == 0;
		}
	}
	elf_end(elf);
	return found;
}
