/*
 * Whether an ELF file defines a symbol, by name, in .symtab or .dynsym:
 * a quick question (does this executable carry librecce, statically
 * linked?) that needs no symbolizer.
 *
 * Ownership: nothing is kept; the caller's descriptor stays open.
 */
#ifndef RECCE_SYMBOLS_ELF_DEFINES_H
#define RECCE_SYMBOLS_ELF_DEFINES_H

/* 1 if the ELF file open on fd defines name, 0 if not or not ELF. */
int elf_defines(int fd, const char *name);

#endif
