/*
 * The GNU build-id of an ELF file, read from its program headers' notes
 * alone: for naming a program recce has not opened as a symbol source
 * (a process noted at the start of a run, proc-maps.h).
 *
 * Ownership: nothing is kept; the caller's descriptor stays open.
 */
#ifndef RECCE_SYMBOLS_ELF_BUILD_ID_H
#define RECCE_SYMBOLS_ELF_BUILD_ID_H

#include <stddef.h>

/* The build-id of the ELF file open on fd, as lowercase hex into hex (cap
 * bytes, 129 hold any). Returns 1, or 0 when it has none, is not ELF or
 * the id does not fit ("" then). */
int elf_build_id(int fd, char *hex, size_t cap);

#endif
