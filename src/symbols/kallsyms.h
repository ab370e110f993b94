/*
 * Kernel symbols from /proc/kallsyms, for the kernel part of call stacks.
 * When the file shows zeroed addresses (kptr_restrict) the table is empty
 * and lookups fail, so kernel frames degrade to [kernel]+0xADDR.
 *
 * Ownership: kallsyms_load() returns a heap object freed by kallsyms_free();
 * returned names live as long as it.
 */
#ifndef RECCE_KALLSYMS_H
#define RECCE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Loads path (NULL means /proc/kallsyms). Returns NULL only on allocation
 * failure or an unreadable file (errno set); an empty table is not an error. */
struct kallsyms *kallsyms_load(const char *path);
void kallsyms_free(struct kallsyms *k);
size_t kallsyms_count(const struct kallsyms *k);

/* Name of the symbol covering addr and its module ("" for vmlinux), or NULL. */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, const char **module,
			    uint64_t *sym_start);

#endif
