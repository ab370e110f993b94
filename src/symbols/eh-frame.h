/*
 * Function ranges from .eh_frame: every function a compiler emits unwind
 * information for has a frame description entry (FDE) giving its first
 * address and its length, and strip(1) leaves .eh_frame in place (the
 * C++ runtime and every unwinder need it). For code with neither symbols
 * nor DWARF this is what tells one function from the next, so that a
 * profile of a stripped binary has a row per function instead of one per
 * address.
 *
 * The section is read as hostile input: every length and pointer is
 * bounds-checked, entries recce cannot decode are skipped, and the count
 * is capped.
 */
#ifndef RECCE_EH_FRAME_H
#define RECCE_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "util/ranges.h"

#define EH_FRAME_MAX_FDES (1u << 22)

/*
 * Adds to out the range [start, start + length) of each FDE of the .eh_frame
 * section whose len bytes are at data and whose address is addr (pc-relative
 * pointers are relative to it), with idx 0. Stops at a terminator, at the
 * end, or at the first entry that does not fit. Returns the number of
 * ranges added, or -ENOMEM.
 */
long eh_frame_ranges(const uint8_t *data, size_t len, uint64_t addr, struct ranges *out);

#endif
