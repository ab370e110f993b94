/*
 * Printing events: text, JSON lines and the Chrome trace format, with the
 * per-thread pairing of span ends to their begins (event-print.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "events/event-print.h"
#include "util/array.h"
#include "util/json-out.h"
#include "util/term-safe.h"

static const char *const kind_names[] = {
    [RECCE_EV_EVENT] = "event",
    [RECCE_EV_SPAN_BEGIN] = "span_begin",
    [RECCE_EV_SPAN_END] = "span_end",
    [RECCE_EV_COUNTER] = "counter",
    [RECCE_EV_VALUE] = "event",
    [RECCE_EV_SEQ_BEGIN] = "seq_begin",
    [RECCE_EV_SEQ_SEND] = "seq_send",
    [RECCE_EV_SEQ_RECV] = "seq_recv",
    [RECCE_EV_SEQ_END] = "seq_end",
    [RECCE_EV_TASK_CREATE] = "task_create",
    [RECCE_EV_TASK_START] = "task_start",
    [RECCE_EV_TASK_STOP] = "task_stop",
    [RECCE_EV_TASK_FINISH] = "task_finish",
};

const char *event_kind_name(uint16_t kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

void event_printer_init(struct event_printer *p, FILE *out, enum event_format format,
			const struct ring_reader *r)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->format = format;
	p->r = r;
	p->zero_ns = r->hdr.mono0;
}

void event_printer_release(struct event_printer *p)
{
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].open);
	free(p->stacks);
	p->stacks = NULL;
	p->nstacks = 0;
}

void event_printer_begin(struct event_printer *p)
{
	if (p->format == EVENTS_TEXT)
		fprintf(p->out, "%12s %8s %-16s %s\n", "TIME(s)", "TID", "THREAD", "EVENT");
	else if (p->format == EVENTS_CHROME) {
		json_out_init(&p->json, p->out);
		json_object(&p->json);
		json_key(&p->json, "traceEvents");
		json_array(&p->json);
	}
}

/* Chrome: the names of the reader's threads, once every thread is known. */
static void put_thread_names(struct event_printer *p)
{
	struct json_out *j = &p->json;
	for (size_t t = 0; t < p->r->nthreads; t++) {
		const struct ring_thread *th = &p->r->threads[t];
		json_newline(j, "");
		json_object(j);
		json_key(j, "ph");
		json_string(j, "M");
		json_key(j, "name");
		json_string(j, "thread_name");
		json_key(j, "pid");
		json_int(j, p->r->hdr.pid);
		json_key(j, "tid");
		json_int(j, th->tid);
		json_key(j, "args");
		json_object(j);
		json_key(j, "name");
		json_string(j, th->name);
		json_end(j);
		json_end(j);
	}
}

void event_printer_end_program(struct event_printer *p)
{
	if (p->format == EVENTS_CHROME)
		put_thread_names(p);
	event_printer_release(p);
}

void event_printer_end(struct event_printer *p)
{
	if (p->format != EVENTS_CHROME)
		return;
	put_thread_names(p);
	struct json_out *j = &p->json;
	json_newline(j, "");
	json_end(j);
	json_key(j, "displayTimeUnit");
	json_string(j, "ns");
	json_end(j);
	putc('\n', p->out);
}

static struct span_stack *stack_of(struct event_printer *p, uint32_t thread)
{
	if (thread >= p->nstacks) {
		size_t cap = p->nstacks;
		struct span_stack *grown =
		    array_reserve(p->stacks, &cap, (size_t)thread + 1, sizeof(*p->stacks));
		if (!grown)
			return NULL;
		memset(grown + p->nstacks, 0, (cap - p->nstacks) * sizeof(*grown));
		p->stacks = grown;
		p->nstacks = cap;
	}
	return &p->stacks[thread];
}

/* Opens or closes a span; for an end, *dur_ns gets its length, or -1
 * when its begin was not seen (before the rings' oldest event). */
static int span_step(struct event_printer *p, const struct ring_event *e, int64_t *dur_ns,
		     size_t *depth)
{
	struct span_stack *s = stack_of(p, e->thread);
	if (!s)
		return -ENOMEM;
	*dur_ns = -1;
	if (e->kind == RECCE_EV_SPAN_BEGIN) {
		*depth = s->n;
		struct open_span *grown =
		    array_reserve(s->open, &s->cap, s->n + 1, sizeof(*s->open));
		if (!grown)
			return -ENOMEM;
		s->open = grown;
		s->open[s->n++] = (struct open_span){e->name, e->time_ns};
		return 0;
	}
	if (e->kind != RECCE_EV_SPAN_END) {
		*depth = s->n;
		return 0;
	}
	for (size_t i = s->n; i-- > 0;) {
		if (strcmp(s->open[i].name, e->name) == 0) {
			*dur_ns = (int64_t)(e->time_ns - s->open[i].begin_ns);
			memmove(&s->open[i], &s->open[i + 1], (s->n - i - 1) * sizeof(*s->open));
			s->n--;
			*depth = i;
			return 0;
		}
	}
	*depth = 0;
	return 0;
}

static void put_duration(FILE *out, int64_t ns)
{
	if (ns < 10000)
		fprintf(out, "%" PRId64 " ns", ns);
	else if (ns < 10000000)
		fprintf(out, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000LL)
		fprintf(out, "%.1f ms", (double)ns / 1e6);
	else
		fprintf(out, "%.1f s", (double)ns / 1e9);
}

static void put_text(struct event_printer *p, const struct ring_event *e, int64_t dur, size_t depth)
{
	const struct ring_thread *th = &p->r->threads[e->thread];
	char tbuf[64], nbuf[4 * RECCE_NAME_MAX + 8];
	int64_t rel = (int64_t)(e->time_ns - p->zero_ns);

	fprintf(p->out, "%12.6f %8d %-16s %*s", (double)rel / 1e9, (int)e->tid,
		term_safe(th->name, tbuf, sizeof(tbuf)), (int)(2 * (depth > 20 ? 20 : depth)), "");
	const char *name = term_safe(e->name, nbuf, sizeof(nbuf));
	switch (e->kind) {
	case RECCE_EV_SPAN_BEGIN:
		fprintf(p->out, "> %s\n", name);
		return;
	case RECCE_EV_SPAN_END:
		fprintf(p->out, "< %s", name);
		if (dur >= 0) {
			fputs("  ", p->out);
			put_duration(p->out, dur);
		}
		putc('\n', p->out);
		return;
	case RECCE_EV_COUNTER:
		fprintf(p->out, "# %s = %" PRId64 "\n", name, e->value);
		return;
	case RECCE_EV_VALUE:
		fprintf(p->out, "* %s %" PRId64 "\n", name, e->value);
		return;
	case RECCE_EV_EVENT:
		fprintf(p->out, "* %s\n", name);
		return;
	case RECCE_EV_TASK_CREATE:
		fprintf(p->out, "task create %s #%" PRIx64 " parent #%" PRIx64 "\n", name,
			(uint64_t)e->value, e->extra);
		return;
	case RECCE_EV_TASK_START:
	case RECCE_EV_TASK_STOP:
	case RECCE_EV_TASK_FINISH:
		fprintf(p->out, "task %-6s #%" PRIx64 "\n", event_kind_name(e->kind) + 5,
			(uint64_t)e->value);
		return;
	default:
		/* seq begin|send|recv|end LABEL #SERIAL, and the trace id as
		 * git shows commits: its first 8 digits. */
		fprintf(p->out, "seq %-5s %s #%" PRId64 "  trace %08" PRIx64 "\n",
			event_kind_name(e->kind) + 4, name, e->value, e->id_hi >> 32);
	}
}

static void put_json(struct event_printer *p, const struct ring_event *e, int64_t dur)
{
	const struct ring_thread *th = &p->r->threads[e->thread];
	FILE *out = p->out;

	fprintf(out, "{\"kind\":\"%s\",\"name\":", event_kind_name(e->kind));
	json_put_string(out, e->name);
	fprintf(out, ",\"pid\":%d,\"tid\":%d,\"thread\":", (int)p->r->hdr.pid, (int)e->tid);
	json_put_string(out, th->name);
	fprintf(out, ",\"time_ns\":%" PRIu64 ",\"realtime_ns\":%" PRIu64, e->time_ns - p->zero_ns,
		ring_reader_realtime(p->r, e->time_ns));
	if (e->kind == RECCE_EV_COUNTER || e->kind == RECCE_EV_VALUE)
		fprintf(out, ",\"value\":%" PRId64, e->value);
	if (e->kind == RECCE_EV_SPAN_END && dur >= 0)
		fprintf(out, ",\"duration_ns\":%" PRId64, dur);
	if (e->kind >= RECCE_EV_TASK_CREATE)
		fprintf(out, ",\"id\":%" PRIu64, (uint64_t)e->value);
	if (e->kind == RECCE_EV_TASK_CREATE)
		fprintf(out, ",\"parent\":%" PRIu64, e->extra);
	if (recce_kind_is_seq(e->kind))
		fprintf(out,
			",\"serial\":%" PRId64 ",\"last\":%" PRIu64 ",\"trace_id\":\"%016" PRIx64
			"%016" PRIx64 "\"",
			e->value, e->extra, e->id_hi, e->id_lo);
	fputs("}\n", out);
}

static void put_chrome(struct event_printer *p, const struct ring_event *e)
{
	struct json_out *j = &p->json;
	const char *ph = e->kind == RECCE_EV_SPAN_BEGIN ? "B"
			 : e->kind == RECCE_EV_SPAN_END ? "E"
			 : e->kind == RECCE_EV_COUNTER	? "C"
							: "i";

	json_newline(j, "");
	json_object(j);
	json_key(j, "ph");
	json_string(j, ph);
	json_key(j, "name");
	json_string(j, e->name);
	json_key(j, "pid");
	json_int(j, p->r->hdr.pid);
	json_key(j, "tid");
	json_int(j, e->tid);
	json_key(j, "ts");
	json_us(j, (int64_t)(e->time_ns - p->zero_ns));
	if (*ph == 'i') {
		json_key(j, "s");
		json_string(j, "t");
	}
	if (e->kind == RECCE_EV_COUNTER || e->kind == RECCE_EV_VALUE) {
		json_key(j, "args");
		json_object(j);
		json_key(j, "value");
		json_int(j, e->value);
		json_end(j);
	}
	json_end(j);
}

int event_printer_put(struct event_printer *p, const struct ring_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t dur;
		size_t depth;
		int err = span_step(p, &e[i], &dur, &depth);
		if (err)
			return err;
		if (p->format == EVENTS_TEXT)
			put_text(p, &e[i], dur, depth);
		else if (p->format == EVENTS_JSON)
			put_json(p, &e[i], dur);
		else
			put_chrome(p, &e[i]);
	}
	if (p->format != EVENTS_CHROME)
		p->printed += n;
	return 0;
}
