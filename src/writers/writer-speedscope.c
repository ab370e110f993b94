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
	struct json_out j;
	const struct stack_set *set;
	uint32_t *ids; /* function id of each frame of the set */
};

static void put_stack(struct ss_writer *w, const struct stack_entry *e)
{
	json_array(&w->j);
	for (size_t i = 0; i < e->nframes; i++)
		json_uint(&w->j, w->ids[stacks_frame_index(w->set, &e->frames[i])]);
	json_end(&w->j);
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
	json_object(&w->j);
	json_key(&w->j, "type");
	json_string(&w->j, "sampled");
	json_key(&w->j, "name");
	json_string(&w->j, name);
	json_key(&w->j, "unit");
	json_string(&w->j, unit);
	json_key(&w->j, "startValue");
	json_int(&w->j, start);
	json_key(&w->j, "endValue");
	json_int(&w->j, end);
	json_key(&w->j, "samples");
	json_array(&w->j);
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
		for (size_t i = 0; i < nevents; i++)
			if (tg->of_entry[events[i].entry] == gi)
				put_stack(w, &set->entries[events[i].entry]);
		json_end(&w->j);
		json_key(&w->j, "weights");
		json_array(&w->j);
		for (size_t i = 0; i < nevents; i++)
			if (tg->of_entry[events[i].entry] == gi)
				json_int(&w->j, events[i].weight);
		json_end(&w->j);
		json_end(&w->j);
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
	for (size_t i = 0; i < n; i++)
		put_stack(w, order[i]);
	json_end(&w->j);
	json_key(&w->j, "weights");
	json_array(&w->j);
	for (size_t i = 0; i < n; i++)
		json_int(&w->j, order[i]->value);
	json_end(&w->j);
	json_end(&w->j);
	free(order);
	return 0;
}

int speedscope_write(FILE *out, const struct stack_set *set, const struct stack_event *events,
		     size_t nevents, const char *name)
{
	struct ss_writer w = {.set = set};
	const struct stack_frame **funcs = NULL;
	struct thread_groups tg;
	size_t nfuncs;
	int ret = stacks_function_ids(set, &w.ids, &funcs, &nfuncs);

	json_out_init(&w.j, out);

	if (ret)
		return ret;
	ret = thread_groups_build(&tg, set);
	if (ret)
		goto out_ids;
	struct json_out *j = &w.j;
	json_object(j);
	json_key(j, "$schema");
	json_string(j, "https://www.speedscope.app/file-format-schema.json");
	json_key(j, "exporter");
	json_string(j, "recce " RECCE_VERSION);
	json_key(j, "name");
	json_string(j, name ? name : "recce");
	json_key(j, "activeProfileIndex");
	json_int(j, 0);
	json_key(j, "shared");
	json_object(j);
	json_key(j, "frames");
	json_array(j);
	for (size_t i = 0; i < nfuncs; i++) {
		json_newline(j, "");
		json_object(j);
		json_key(j, "name");
		json_string(j, funcs[i]->name && funcs[i]->name[0] ? funcs[i]->name : "[unknown]");
		if (funcs[i]->file && funcs[i]->file[0]) {
			json_key(j, "file");
			json_string(j, funcs[i]->file);
		}
		json_end(j);
	}
	json_end(j);
	json_end(j);
	json_newline(j, "");
	json_key(j, "profiles");
	json_array(j);
	for (size_t g = 0; g < tg.n && !ret; g++) {
		json_newline(j, "");
		ret = put_profile(&w, &tg, g, events, nevents);
	}
	json_end(j);
	json_end(j);
	putc('\n', out);
	thread_groups_release(&tg);
	if (!ret && (fflush(out) != 0 || ferror(out)))
		ret = -EIO;
out_ids:
	free(w.ids);
	free(funcs);
	return ret;
}
