/*
 * The profile of a few calls, for `recce capture`: from a recording of a
 * process with a timeline (every sample's time and thread) and the times
 * of some calls of a function, the samples each call's thread took while
 * the call ran, each call on its own.
 *
 * The stacks are cut at the call: a sample's frames from the leaf up to
 * the outermost frame of the captured function, and a frame of the call's
 * own above it (named by the caller: "call 1: handle(n=3) 12.3 ms"), so a
 * flamegraph shows the calls side by side. A sample in a call's window
 * whose stack does not hold the function (a broken stack) is counted and
 * left out. Every sample keeps its pid and tid labels, and gets the call's
 * name as its "thread" label and its number as a numeric "call" label:
 * writers that draw one track per thread draw one per call.
 *
 * Ownership: capture_profile() returns a new profile the caller frees
 * with profile_free(); it copies what it needs of p.
 */
#ifndef RECCE_CAPTURE_PROFILE_H
#define RECCE_CAPTURE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct profile;

struct capture_call {
	uint32_t tid;
	int64_t start_ns, end_ns; /* on the timeline: since the recording's start */
	const char *name;	  /* the call's frame and track name */
	/* NULL, or the function this call's stacks are cut at, in place of
	 * the symbols given: "[OBJECT:]FUNCTION" as trace names it. */
	const char *function;
	/* With function: NULL, or its source file (file_cut: the start of
	 * its name), for a function known by its file and its last name (a
	 * Python call "py:module.method": its code's name and file). */
	const char *file;
	int file_cut;
};

struct capture_counts {
	uint64_t kept;	  /* samples kept, over all calls */
	uint64_t outside; /* taken in a call's window, without the function on the stack */
};

/*
 * Builds the profile of calls[0..n) of the function whose symbols (as the
 * symbol table spells them) are symbols[0..nsymbols), from p and its
 * timeline. Returns 0, -ENODATA when p has no timeline, -EBADMSG for a
 * malformed one, -ENOMEM.
 */
int capture_profile(const struct profile *p, const char *const *symbols, size_t nsymbols,
		    const struct capture_call *calls, size_t n, struct profile **out,
		    struct capture_counts *counts);

#endif
