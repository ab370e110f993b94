/*
 * The shared libraries a program loads before its own code runs, found
 * as the dynamic loader finds them (ld.so(8)): for `trace -- CMD`, whose
 * patterns are resolved before CMD runs. What the program opens later
 * (dlopen) is not known here.
 */
#ifndef RECCE_PROC_LIB_NEEDS_H
#define RECCE_PROC_LIB_NEEDS_H

#include <stddef.h>

/* The files program will map: its interpreter (PT_INTERP) and each
 * library its DT_NEEDED names, breadth first through the libraries' own,
 * each found once (real paths, malloc'ed, in *paths, *n of them; the
 * caller frees each and the array). A name found nowhere is left out.
 * Returns 0, -ENOENT when program is no ELF file it can read, -ENOMEM. */
int lib_needs(const char *program, char ***paths, size_t *n);

#endif
