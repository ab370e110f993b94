/* Fuzz target: the reader of librecce event files (events/ring-read.h),
 * which reads files that any process can write: opened, drained twice
 * (as --follow does), printed in every format and saved again, as
 * `recce events` would, its sequence events merged and drawn, as
 * `recce seq` would, and its task records turned into metrics, as
 * `recce tasks` would. The reader refuses a header whose file_size is
 * not the file's, which random mutations never get right: for inputs of
 * even length the target writes the right size in first, so that the
 * fuzzer reaches the slots, rings and names behind it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "events/event-print.h"
#include "events/ring-read.h"
#include "events/ring-write.h"
#include "events/seq-merge.h"
#include "events/seq-print.h"
#include "events/tasks-print.h"
#include "fuzz.h"

static void show(struct ring_reader *r, struct ring_event *ev, size_t n, FILE *out)
{
	for (int f = EVENTS_TEXT; f <= EVENTS_CHROME; f++) {
		struct event_printer p;
		event_printer_init(&p, out, (enum event_format)f, r);
		event_printer_begin(&p);
		event_printer_put(&p, ev, n);
		event_printer_end(&p);
		event_printer_release(&p);
	}
	ring_save(out, r, ev, n);
	struct tasks t;
	tasks_init(&t);
	if (tasks_feed(&t, ev, n) == 0) {
		struct tasks_view v = {&t, (int)r->hdr.pid, "fuzz", 0, 0, TASK_SORT_EXEC, NULL, 0};
		tasks_print_table(out, &v);
		tasks_print_json(out, &v);
		tasks_print_prometheus(out, &v, 50);
	}
	tasks_release(&t);
	struct seq_source src = {.r = r, .ev = ev, .n = n};
	struct seq_result res;
	/* With a profile's costs too (seq --profile): one of a trace id of 0. */
	static const struct seq_cost cost = {0, 0, 0, 12000000, 3};
	const struct seq_costs costs = {&cost, 1, "cpu", "nanoseconds", "p.pb.gz"};
	if (seq_merge(&src, 1, &res) == 0) {
		for (int f = SEQ_TEXT; f <= SEQ_CHROME; f++) {
			seq_print(out, (enum seq_format)f, &src, 1, &res, NULL);
			seq_print(out, (enum seq_format)f, &src, 1, &res, &costs);
		}
		seq_result_release(&res);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	uint8_t *copy = malloc(size ? size : 1);
	FILE *out = fopen("/dev/null", "w");

	if (copy && out) {
		memcpy(copy, data, size);
		uint64_t file_size = size;
		if (size % 2 == 0 && size >= offsetof(struct recce_file_header, file_size) + 8)
			memcpy(copy + offsetof(struct recce_file_header, file_size), &file_size, 8);
		int fd = fuzz_file(copy, size, path);
		struct ring_reader r;
		if (fd >= 0 && ring_reader_open_path(&r, path) == 0) {
			struct ring_event *ev = NULL;
			size_t n = 0, cap = 0;
			ring_reader_drain(&r, &ev, &n, &cap);
			ring_reader_drain(&r, &ev, &n, &cap);
			show(&r, ev, n, out);
			free(ev);
			ring_reader_release(&r);
		}
		if (fd >= 0)
			fuzz_file_done(fd, path);
	}
	if (out)
		fclose(out);
	free(copy);
	return 0;
}
