/*
 * The Chrome trace writer (see writer-chrome.h). Each thread is walked
 * through the events in time order with its stack of open frames; a new
 * sample closes the open frames past the prefix it shares with them and
 * opens its own from there.
 */
#include "writers/writer-chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/thread-groups.h"
#include "util/json-out.h"

struct chrome_track {
	FILE *out;
	int64_t pid, tid;
	const struct stack_frame **open; /* the open frames, root first */
	size_t nopen;
	int first_event; /* of the whole file: no comma before it */
};

static void put_event(struct chrome_track *t, char ph, const struct stack_frame *f, int64_t ts)
{
	fputs(t->first_event ? "\n" : ",\n", t->out);
	t->first_event = 0;
	fprintf(t->out, "{\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", ph,
		t->pid, t->tid);
	json_put_us(t->out, ts);
	fputs(",\"name\":", t->out);
	json_put_string(t->out, f->name && f->name[0] ? f->name : "[unknown]");
	if (ph == 'B' && f->file && f->file[0]) {
		fputs(",\"cat\":\"cpu\",\"args\":{\"file\":", t->out);
		json_put_string(t->out, f->file);
		fprintf(t->out, ",\"line\":%" PRId64 "}", f->line);
	}
	putc('}', t->out);
}

static void close_to(struct chrome_track *t, size_t depth, int64_t ts)
{
	while (t->nopen > depth)
		put_event(t, 'E', t->open[--t->nopen], ts);
}

/* s as an event shows it: dflt when absent or empty. */
static const char *shown(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

/* Whether a and b are one frame as the trace shows them (put_event): a
 * frame with no name and one with an empty name are both [unknown], and
 * a line is shown only with its file. */
static int same_frame(const struct stack_frame *a, const struct stack_frame *b)
{
	if (a->name != b->name && strcmp(shown(a->name, "[unknown]"), shown(b->name, "[unknown]")))
		return 0;
	if (a->file != b->file && strcmp(shown(a->file, ""), shown(b->file, "")))
		return 0;
	return !shown(a->file, NULL) || a->line == b->line;
}

static void put_metadata(struct chrome_track *t, const char *what, const char *name)
{
	fputs(t->first_event ? "\n" : ",\n", t->out);
	t->first_event = 0;
	fprintf(t->out,
		"{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
		",\"name\":\"%s\",\"args\":{\"name\":",
		t->pid, t->tid, what);
	json_put_string(t->out, name);
	fputs("}}", t->out);
}

static void put_track(struct chrome_track *t, const struct stack_set *set,
		      const struct thread_groups *tg, size_t gi, const struct stack_event *events,
		      size_t nevents)
{
	int64_t end = -1; /* of the last sample */
	char name[128];

	snprintf(name, sizeof(name), "%s%stid %" PRId64, tg->groups[gi].name,
		 tg->groups[gi].name[0] ? " " : "",
		 tg->groups[gi].tid >= 0 ? tg->groups[gi].tid : 0);
	put_metadata(t, "thread_name", name);
	for (size_t i = 0; i < nevents; i++) {
		const struct stack_event *ev = &events[i];
		const struct stack_entry *e = &set->entries[ev->entry];

		if (tg->of_entry[ev->entry] != gi)
			continue;
		int64_t period = ev->period > 0 ? ev->period : 1;
		int64_t start = ev->time_ns - period, stop = ev->time_ns;
		if (end >= 0 && start - end > period / 2)
			close_to(t, 0, end); /* off the CPU in between */
		if (start < end || end < 0)
			start = end < 0 ? (start < 0 ? 0 : start) : end;
		if (stop < start)
			stop = start;
		size_t common = 0;
		while (common < t->nopen && common < e->nframes &&
		       same_frame(t->open[common], &e->frames[common]))
			common++;
		close_to(t, common, start);
		for (size_t d = common; d < e->nframes; d++) {
			t->open[t->nopen++] = &e->frames[d];
			put_event(t, 'B', &e->frames[d], start);
		}
		end = stop;
	}
	close_to(t, 0, end);
}

int chrome_write(FILE *out, const struct stack_set *set, const struct stack_event *events,
		 size_t nevents)
{
	struct thread_groups tg;
	size_t deepest = 1;
	int ret = thread_groups_build(&tg, set);

	if (ret)
		return ret;
	for (size_t i = 0; i < set->n; i++)
		if (set->entries[i].nframes > deepest)
			deepest = set->entries[i].nframes;
	struct chrome_track t = {.out = out, .first_event = 1};
	t.open = malloc(deepest * sizeof(*t.open));
	if (!t.open) {
		thread_groups_release(&tg);
		return -ENOMEM;
	}
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"recce\"},"
	      "\"traceEvents\":[",
	      out);
	for (size_t g = 0; g < tg.n; g++) {
		t.pid = tg.groups[g].pid >= 0 ? tg.groups[g].pid : 0;
		/* A row per thread; with calls (recce capture), a row per call. */
		t.tid = tg.groups[g].call >= 0	? tg.groups[g].call
			: tg.groups[g].tid >= 0 ? tg.groups[g].tid
						: 0;
		t.nopen = 0;
		put_track(&t, set, &tg, g, events, nevents);
	}
	fputs("\n]}\n", out);
	free(t.open);
	thread_groups_release(&tg);
	return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}
