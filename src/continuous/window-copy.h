/*
 * A window of the local store read back into memory, as the fleet
 * store's exports take it: its row and its processes' profiles, decoded,
 * with every string they point to. The backlog sends such windows again;
 * bench/fleet-sim.c sends them as many hosts.
 *
 * Ownership: the caller's struct, zeroed before window_copy_read() and
 * released with window_copy_release() (also after a failed read).
 */
#ifndef RECCE_CONTINUOUS_WINDOW_COPY_H
#define RECCE_CONTINUOUS_WINDOW_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

struct profile;

struct window_copy {
	struct store_window w; /* w.host points into host */
	int found;
	char host[256];
	struct store_profile *sp; /* n of them, strings in strings */
	struct profile **p;
	char **strings; /* every string the rows point to */
	size_t n, sp_cap, p_cap, nstrings, strings_cap;
};

/* Reads the window that starts at start_ns back into c. 0, -ENOENT when
 * the store has no such window (retention took it), -EBADMSG when a
 * profile cannot be decoded, or -errno. */
int window_copy_read(struct store *s, int64_t start_ns, struct window_copy *c);

void window_copy_release(struct window_copy *c);

#endif
