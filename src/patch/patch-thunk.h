/*
 * The thunk between a patched function's callers and its replacement
 * (lib/patch/thunk.S, loaded into the target as librecce-patch.so). A
 * caller compiled with GCC's -fipa-ra (on at -O2) may keep values in
 * registers the old function happened to leave alone, through a tail
 * call or into its next call's arguments; the thunk gives every register
 * but the result back as it was, so no replacement can break such a
 * caller, whatever registers it uses.
 *
 * The patched entry jumps to a 64-byte slot in a page recce maps near it:
 * code that pushes the address of the slot's descriptor and jumps to the
 * thunk, then the descriptor (the replacement, the bytes of stack
 * arguments to pass on, which registers carry the result, how wide the
 * machine's vector registers are). The thunk reads the descriptor only in its first
 * PATCH_THUNK_READ_MAX bytes, which undo keeps threads out of.
 */
#ifndef RECCE_PATCH_PATCH_THUNK_H
#define RECCE_PATCH_PATCH_THUNK_H

#include <stddef.h>
#include <stdint.h>

#include "inject/inject.h"
#include "symbols/sym-func.h"

#define PATCH_THUNK_LIB	     "librecce-patch.so"
#define PATCH_SLOT_LEN	     64
#define PATCH_THUNK_READ_MAX 128

struct symbolizer;

/* Loads the thunk's library into the target (a second load only counts
 * up): 0 with *entry its address there; -ENOENT with the places looked
 * in written to detail when recce's library is missing; -ENOEXEC with
 * dlerror()'s text in detail; or injector_call()'s errors. */
int patch_thunk_load(struct injector *inj, struct symbolizer *sym, uint64_t *entry, char *detail,
		     size_t dlen);

/* The slot at addr that sends calls through the thunk at entry to
 * new_fn, for a function of the given shape (NULL: unknown, every
 * register that may carry a result is left to the replacement). */
void patch_thunk_slot(uint8_t out[PATCH_SLOT_LEN], uint64_t addr, uint64_t entry, uint64_t new_fn,
		      const struct sym_func_shape *shape, const struct injector *inj);

/* Whether out holds a slot written by patch_thunk_slot(); *entry the
 * thunk it sends calls to. */
int patch_thunk_is_slot(const uint8_t slot[PATCH_SLOT_LEN], uint64_t addr, uint64_t *entry);

#endif
