/*
 * The speedscope writer (see writer-speedscope.h). Functions are numbered
 * once for the whole set (stacks_function_ids()) and become the shared
 * frame list; each thread's profile then lists stacks as arrays of those
 * numbers, root first.
 */
#include "writers/writer-speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/thread-groups.h"
#include "util/json-out.h"
#include "util/version.h"
#include "util/sat.h"

struct ss_writer {
	FILE *out;
	const struct stack_set *set;
	uint32_t *ids; /* function id of each frame of the set */
};

static void put_stack(struct ss_writer *w, const struct stack_entry *e)
{
	putc('[', w->out);
	for (size_t i = 0; i < e->nframes; i++)
		fprintf(w->out, "%s%" PRIu32, i ? "," : "",
			w->ids[stacks_frame_index(w->set, &e->frames[i])]);
	putc(']', w->out);
}

/* Orders entries by their frames' function ids, root first: merged stacks
 * come out in the order a flamegraph draws them. */
static int stack_cmp(const void *a, const void *b, void *arg)
{
	const struct ss_writer *w = arg;
	const struct stack_entry *x = *(const struct stack_entry *const *)a;
	const struct stack_entry *y = *(const struct stack_entry *const *)b;
	size_t n = x->nframes < y->nframes ? x->nframes : y->nframes;

	for (size_t i = 0; i < n; i++) {
		uint32_t fx = w->ids[stacks_frame_index(w->set, &x->frames[i])];
		uint32_t fy = w->ids[stacks_frame_index(w->set, &y->frames[i])];
		if (fx != fy)
			return fx < fy ? -1 : 1;
	}
	return (x->nframes > y->nframes) - (x->nframes < y->nframes);
}

static void put_profile_head(struct ss_writer *w, const struct thread_group *g, int timeline,
			     int64_t start, int64_t end)
{
	const char *unit =
	    w->set->unit && strcmp(w->set->unit, "nanoseconds") == 0 ? "nanoseconds" : "none";
	char name[256];

	if (g->tid >= 0)
		snprintf(name, sizeof(name), "%s%stid %" PRId64 " (pid %" PRId64 ")%s", g->name,
			 g->name[0] ? " " : "", g->tid, g->pid,
			 timeline ? "" : ": order unknown, merged stacks");
	else
		snprintf(name, sizeof(name), "all samples%s",
			 timeline ? "" : ": order unknown, merged stacks");
	fputs("{\"type\":\"sampled\",\"name\":", w->out);
	json_put_string(w->out, name);
	fprintf(w->out,
		",\"unit\":\"%s\",\"startValue\":%" PRId64 ",\"endValue\":%" PRId64
		",\"samples\":[",
		unit, start, end);
}

static int put_profile(struct ss_writer *w, const struct thread_groups *tg, size_t gi,
		       const struct stack_event *events, size_t nevents)
{
	const struct stack_set *set = w->set;
	size_t n = 0;
	int64_t sum = 0;

	if (events) {
		int64_t start = -1;
		for (size_t i = 0; i < nevents; i++) {
			if (tg->of_entry[events[i].entry] != gi)
				continue;
			if (start < 0)
				start = events[i].time_ns;
			sum = sat_add(sum, events[i].weight);
		}
		/* speedscope lays sampled profiles out by weight, from startValue. */
		put_profile_head(w, &tg->groups[gi], 1, 0, sum);
		for (size_t i = 0; i < nevents; i++) {
			if (tg->of_entry[events[i].entry] != gi)
				continue;
			if (n++)
				putc(',', w->out);
			put_stack(w, &set->entries[events[i].entry]);
		}
		fputs("],\"weights\":[", w->out);
		n = 0;
		for (size_t i = 0; i < nevents; i++)
			if (tg->of_entry[events[i].entry] == gi)
				fprintf(w->out, "%s%" PRId64, n++ ? "," : "", events[i].weight);
		fputs("]}", w->out);
		return 0;
	}

	const struct stack_entry **order = malloc((set->n ? set->n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < set->n; i++) {
		if (tg->of_entry[i] != gi)
			continue;
		order[n++] = &set->entries[i];
		sum = sat_add(sum, set->entries[i].value);
	}
	qsort_r(order, n, sizeof(*order), stack_cmp, w);
	put_profile_head(w, &tg->groups[gi], 0, 0, sum);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc(',', w->out);
		put_stack(w, order[i]);
	}
	fputs("],\"weights\":[", w->out);
	for (size_t i = 0; i < n; i++)
		fprintf(w->out, "%s%" PRId64, i ? "," : "", order[i]->value);
	fputs("]}", w->out);
	free(order);
	return 0;
}

int speedscope_write(FILE *out, const struct stack_set *set, const struct stack_event *events,
		     size_t nevents, const char *name)
{
	struct ss_writer w = {out, set, NULL};
	const struct stack_frame **funcs = NULL;
	struct thread_groups tg;
	size_t nfuncs;
	int ret = stacks_function_ids(set, &w.ids, &funcs, &nfuncs);

	if (ret)
		return ret;
	ret = thread_groups_build(&tg, set);
	if (ret)
		goto out_ids;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
	fputs("\"exporter\":\"recce " RECCE_VERSION "\",\"name\":", out);
	json_put_string(out, name ? name : "recce");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < nfuncs; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_put_string(out,
				funcs[i]->name && funcs[i]->name[0] ? funcs[i]->name : "[unknown]");
		if (funcs[i]->file && funcs[i]->file[0]) {
			fputs(",\"file\":", out);
			json_put_string(out, funcs[i]->file);
		}
		putc('}', out);
	}
	fputs("]},\n\"profiles\":[", out);
	for (size_t g = 0; g < tg.n && !ret; g++) {
		fputs(g ? ",\n" : "\n", out);
		ret = put_profile(&w, &tg, g, events, nevents);
	}
	fputs("]}\n", out);
	thread_groups_release(&tg);
	if (!ret && (fflush(out) != 0 || ferror(out)))
		ret = -EIO;
out_ids:
	free(w.ids);
	free(funcs);
	return ret;
}
