/*
 * A page of code recce maps into a process near an address, within reach
 * of a 5-byte jump (2 GiB): for patch's far jumps and for trace --fast's
 * trampolines. The page is mapped read and execute only, by an injected
 * mmap, and filled through /proc/PID/mem (target-mem), so it is never
 * writable in the process; it is named ("[anon:NAME]" in
 * /proc/PID/maps) so that recce finds it again.
 */
#ifndef RECCE_INJECT_NEAR_PAGE_H
#define RECCE_INJECT_NEAR_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "inject/inject.h"

/* Farthest a page may lie from the address it serves: 2 GiB less room
 * for the page itself and the function's length. */
#define NEAR_PAGE_REACH ((1ll << 31) - (1 << 20))

/*
 * Maps len bytes (a multiple of the page size) as close to near as the
 * free gaps allow, named name. Returns 0 and the address in *addr;
 * -ENOSPC when no gap lies within NEAR_PAGE_REACH; or injector_call()'s
 * errors.
 */
int near_page_map(struct injector *inj, uint64_t near, size_t len, const char *name,
		  uint64_t *addr);

/* Whether a rel32 jump or call at from (5 bytes long) reaches to. */
int near_reaches(uint64_t from, uint64_t to);

#endif
