/*
 * The implementation an IFUNC resolves to (memcpy, strlen, ... in glibc
 * choose one by the CPU's features at load time), found by asking this
 * process's own loader: when recce maps the same file as the target (the
 * same device and inode), on the same CPU, the loader's choice is the
 * target's. A file recce does not map (another libc, in a container) is
 * not resolved.
 *
 * Ownership: nothing is kept.
 */
#ifndef RECCE_SYMBOLS_IFUNC_H
#define RECCE_SYMBOLS_IFUNC_H

#include <stdint.h>

/* The ELF address in the file at path of the function the IFUNC symbol
 * resolves to, into *vaddr. Returns 0, or -ENOENT when recce does not map
 * that file or the loader does not know the symbol. */
int ifunc_resolve_here(const char *path, const char *symbol, uint64_t *vaddr);

#endif
