/*
 * The filtered pprof writer (see writer-pprof.h). The encoder only reads a
 * profile, so the filtered profile is a shallow copy of the original with
 * its own sample array and timeline: nothing else is copied.
 */
#include "writers/writer-pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/timeline.h"

/* The timeline of the kept samples, renumbered to their new places. */
static int timeline_filter(const struct profile *p, const uint64_t *remap, unsigned char **buf,
			   size_t *len)
{
	struct timeline_event *ev;
	size_t n;
	int ret = timeline_decode(p->timeline, p->timeline_len, p->nsamples, &ev, &n);

	if (ret)
		return ret;
	ret = timeline_remap(ev, n, remap, buf, len);
	free(ev);
	return ret;
}

int pprof_write_view(FILE *out, const struct profile *p, const struct stack_set *set)
{
	struct profile view = *p;
	struct profile_sample *samples = malloc((set->n ? set->n : 1) * sizeof(*samples));
	uint64_t *remap = calloc(p->nsamples + 1, sizeof(*remap));
	unsigned char *timeline = NULL;
	void *buf = NULL;
	size_t len;
	int ret = -ENOMEM;

	if (!samples || !remap)
		goto out;
	for (size_t i = 0; i < set->n; i++) {
		samples[i] = *set->entries[i].sample;
		remap[set->entries[i].sample - p->samples] = i + 1;
	}
	view.samples = samples;
	view.nsamples = view.samples_cap = set->n;
	if (p->timeline) {
		ret = timeline_filter(p, remap, &timeline, &view.timeline_len);
		if (ret)
			goto out;
		view.timeline = timeline;
	}
	ret = pprof_encode(&view, 1, &buf, &len);
	if (ret)
		goto out;
	if (fwrite(buf, 1, len, out) != len || fflush(out) != 0)
		ret = -EIO;
out:
	free(buf);
	free(timeline);
	free(remap);
	free(samples);
	return ret;
}
