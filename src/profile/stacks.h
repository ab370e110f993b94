/*
 * Stacks: the view of a profile that every report writer draws from. Each
 * pprof sample becomes one list of frames, root first, leaf last, with
 * inlined functions expanded into frames of their own, and one value (the
 * chosen sample type). Filters by pid, tid and function regex are applied
 * here, once, for every writer.
 *
 * Frame names: the function name when the profile has one; otherwise
 * "MODULE+0xOFFSET" (the mapping's file base name and the file offset), or
 * "0xADDRESS" when no mapping covers the address either.
 *
 * Samples whose chosen value is 0 are left out (they weigh nothing in any
 * view); a sample with no locations is kept, with no frames.
 *
 * Ownership: stacks_from_profile() fills a caller-allocated stack_set that
 * borrows strings from the profile (the profile must outlive it) and owns
 * its arrays and the generated "MODULE+0xOFFSET" names; free them with
 * stacks_release().
 */
#ifndef RECCE_STACKS_H
#define RECCE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <regex.h>

#include "profile/profile.h"

struct stack_frame {
	const char *name;
	const char *file;   /* "" if unknown */
	int64_t line;	    /* 0 if unknown */
	const char *module; /* mapping file base name, "" if none */
};

struct stack_entry {
	size_t nframes;
	struct stack_frame *frames; /* root first */
	int64_t value;
	const struct profile_sample *sample;
	int64_t base; /* for a diff: the value in the base profile (else 0) */
};

struct stack_filter {
	const int64_t *pids; /* NULL = any */
	size_t npids;
	const int64_t *tids;
	size_t ntids;
	const char *const *comms; /* keep samples whose "comm" label is one; NULL = any */
	size_t ncomms;
	/* "KEY=VALUE": keep samples whose label KEY is one of the VALUEs
	 * given for KEY, for every KEY given (a number label matches the
	 * VALUE it prints as). NULL = any. */
	const char *const *tags;
	size_t ntags;
	/* Give each stack a root frame of its process, "[COMM PID]" (the
	 * "comm" label, else the thread's name): a profile of many
	 * processes, where the same main() of different programs would
	 * merge. */
	int process_roots;
	/* Above that, a root frame of its host, "[host NAME]" (the "host"
	 * label): a profile merged from several nodes. */
	int host_roots;
	regex_t *focus;	 /* keep samples with a frame matching it; NULL = all */
	regex_t *ignore; /* drop samples with a frame matching it; NULL = none */
};

struct stack_set {
	struct stack_entry *entries;
	size_t n;
	int64_t total;		 /* sum of the kept entries' values */
	int64_t dropped;	 /* value of samples the filters removed */
	const char *type, *unit; /* of the chosen value */

	/* private: the frames of all entries and the generated names */
	struct stack_frame *frame_pool;
	char *name_pool;
	char *root_pool; /* process_roots: the root frames' names */
};

/* Builds the stacks of p for the sample type at value_index (use
 * p->default_sample_type, or profile_sample_type_index()). filter may be
 * NULL. Returns 0, -EINVAL for a bad index, -ENOMEM. */
int stacks_from_profile(const struct profile *p, size_t value_index,
			const struct stack_filter *filter, struct stack_set *out);
void stacks_release(struct stack_set *set);

/*
 * Fills out with the entries of after (value as is, base 0) followed by
 * those of before (value 0, base = their value). The frames are borrowed
 * from both sets, which must outlive out; out's total is after's. Release
 * out with stacks_release(). Returns 0 or -ENOMEM.
 */
int stacks_diff_merge(const struct stack_set *before, const struct stack_set *after,
		      struct stack_set *out);

/* One sample of the timeline: which entry, when, and its weight. */
struct stack_event {
	size_t entry;	 /* index into set->entries */
	int64_t time_ns; /* since the start of the recording */
	int64_t weight;	 /* the period for a time value type, else 1 */
	int64_t period;	 /* CPU ns the sample stands for */
};

/*
 * The events of p's timeline whose sample the set kept, in time order, in
 * a heap array the caller frees. set must have been built from p. Returns
 * 0, -ENODATA when p has no timeline, -EBADMSG for a malformed one,
 * -ENOMEM.
 */
int stacks_timeline(const struct stack_set *set, const struct profile *p,
		    struct stack_event **events, size_t *n);

/*
 * Numbers the distinct functions of set, a function being a (name, file)
 * pair: ids[k] is the id of the k-th frame of the set's frames in entry
 * order (frame_pool order), and funcs[id] a frame of that function. Both
 * are heap arrays the caller frees. Returns 0 or -ENOMEM.
 */
int stacks_function_ids(const struct stack_set *set, uint32_t **ids,
			const struct stack_frame ***funcs, size_t *nfuncs);

/* The index of f in the set's frames (the key into function ids). */
size_t stacks_frame_index(const struct stack_set *set, const struct stack_frame *f);

/* The frames of all entries together. */
size_t stacks_nframes(const struct stack_set *set);

/* The numeric label key (pid, tid) of an entry's sample; def if none. */
int64_t stacks_entry_num(const struct stack_entry *e, const char *key, int64_t def);

#endif
