/*
 * Profiles added into one: the windows of the continuous store merged for
 * a query. Samples with the same stack (the same functions, lines,
 * mappings and addresses) and the same labels become one, their values
 * summed; extra labels (the host, the process, the program of a window)
 * are added to every sample of the source they came with. The sample
 * types come from the first profile merged; a later profile adds its
 * values of the types with the same name and unit.
 *
 * Ownership: the caller owns the merger struct and dst; the merger's
 * tables live until profile_merger_release().
 */
#ifndef RECCE_PROFILE_MERGE_H
#define RECCE_PROFILE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/htab.h"

struct profile_merger {
	struct profile *dst;
	struct htab mappings, locations, samples; /* content hash -> id or index in dst */
	/* Only the samples whose numeric label only[i].key is only[i].num,
	 * for each of the first nonly, are merged (one process's samples:
	 * "pid"), with every label but those of a key in only[] whose
	 * drop is set (a label the caller keeps elsewhere). */
	struct {
		const char *key;
		int64_t num;
		int drop;
	} only[2];
	size_t nonly;
};

void profile_merger_init(struct profile_merger *m, struct profile *dst);
void profile_merger_release(struct profile_merger *m);

/* Adds src's samples to the destination, each with its own labels and
 * then extra's. Returns 0, -ENOMEM, or -EINVAL for a profile of more
 * than 16 sample types. */
int profile_merge(struct profile_merger *m, const struct profile *src,
		  const struct profile_label *extra, size_t nextra);

#endif
