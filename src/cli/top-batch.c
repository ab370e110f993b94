/*
 * Batch output of `recce top`: each snapshot as a block of text (a header,
 * event lines, one row per thread or process, then a blank line), or with
 * --json as one JSON object per line, for scripts and tests. Rows are
 * sorted by CPU, busiest first. The text lines are also what the screen
 * (top-tui.c) draws.
 */
#include <stdio.h>
#include <string.h>

#include "cli/top-ui.h"
#include "util/json-out.h"
#include "util/term-safe.h"

static void format_kib(char *buf, size_t len, uint64_t kib)
{
	if (kib < 10 * 1024)
		snprintf(buf, len, "%llu KiB", (unsigned long long)kib);
	else if (kib < 10 * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", (double)kib / 1024.0);
	else
		snprintf(buf, len, "%.1f GiB", (double)kib / (1024.0 * 1024.0));
}

static void format_uptime(char *buf, size_t len, double up)
{
	unsigned long long s = (unsigned long long)up;

	if (s >= 86400)
		snprintf(buf, len, "%llud %02llu:%02llu:%02llu", s / 86400, s / 3600 % 24,
			 s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%02llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
}

size_t top_format_header(struct top_session *s, char (*lines)[TOP_LINE_LEN], size_t max)
{
	const struct top_header *h = top_model_header(s->model);
	char up[32], mem_used[32], mem_total[32], rss[32];
	size_t n = 0;
	int at;

	if (max < 3)
		return 0;
	format_uptime(up, sizeof(up), h->uptime);
	format_kib(mem_used, sizeof(mem_used), h->mem_total_kb - h->mem_available_kb);
	format_kib(mem_total, sizeof(mem_total), h->mem_total_kb);
	format_kib(rss, sizeof(rss), h->rss_kb);
	snprintf(lines[n++], TOP_LINE_LEN,
		 "recce top - up %s, load %.2f %.2f %.2f, mem %s used of %s", up, h->load[0],
		 h->load[1], h->load[2], mem_used, mem_total);
	at = snprintf(lines[n], TOP_LINE_LEN, "cpu %5.1f%% (us %.1f%%, sy %.1f%%):", h->all.busy,
		      h->all.user, h->all.sys);
	for (size_t i = 0; i < h->ncpus && at > 0 && at < TOP_LINE_LEN; i++)
		at += snprintf(lines[n] + at, (size_t)(TOP_LINE_LEN - at), " cpu%zu %.1f%%", i,
			       h->cpus[i].busy);
	n++;
	snprintf(lines[n++], TOP_LINE_LEN,
		 "%s: %zu process%s, %zu thread%s, cpu %.1f%%, rss %s, %.0f csw/s; recce cpu "
		 "%.1f%%, %llu samples",
		 s->npids ? "targets" : "all", h->processes, h->processes == 1 ? "" : "es",
		 h->threads, h->threads == 1 ? "" : "s", h->cpu, rss, h->csw_rate, h->self_cpu,
		 (unsigned long long)h->samples);
	if (!s->sampler && n < max)
		snprintf(lines[n++], TOP_LINE_LEN, "sampling off: %s", s->sampling_off);
	for (size_t i = 0; i < s->nevents && n < max; i++)
		snprintf(lines[n++], TOP_LINE_LEN, "%s", s->events[i]);
	return n;
}

void top_format_columns(const struct top_session *s, char *buf, size_t len)
{
	snprintf(buf, len, "%7s %7s %-15s S %6s %6s %6s %7s %7s %9s  %-32s %s", "PID",
		 s->npids ? "TID" : "THREADS", "NAME", "CPU%", "USR%", "SYS%", "VCSW/s", "IVCSW/s",
		 "RSS", "HOT (SHARE)", "LAST");
}

void top_format_row(const struct top_session *s, const struct top_row *r, char *buf, size_t len)
{
	char hot[160], rkib[32], name[64], fn[128], last[128], id[24];

	/* Names come from the target: escaped for the terminal. */
	if (r->hot)
		snprintf(hot, sizeof(hot), "%s (%.0f%%)", term_safe(r->hot, fn, sizeof(fn)),
			 r->hot_share * 100);
	else
		snprintf(hot, sizeof(hot), "-");
	format_kib(rkib, sizeof(rkib), r->rss_kb);
	if (s->npids && r->tid == TOP_ENDED_TID)
		snprintf(id, sizeof(id), "-");
	else
		snprintf(id, sizeof(id), "%ld", s->npids ? (long)r->tid : r->nthreads);
	snprintf(buf, len, "%7d %7s %-15s %c %6.1f %6.1f %6.1f %7.0f %7.0f %9s  %-32s %s",
		 (int)r->pid, id, term_safe(r->name, name, sizeof(name)), r->state,
		 r->cpu_user + r->cpu_sys, r->cpu_user, r->cpu_sys, r->vcsw_rate, r->ivcsw_rate,
		 rkib, hot, r->last ? term_safe(r->last, last, sizeof(last)) : "-");
}

static void print_text(struct top_session *s, FILE *out)
{
	char lines[3 + 1 + TOP_MAX_EVENTS][TOP_LINE_LEN], buf[TOP_LINE_LEN];
	const struct top_row *const *rows;
	ssize_t n = top_model_view(s->model, TOP_SORT_CPU, NULL, &rows);
	size_t nlines = top_format_header(s, lines, sizeof(lines) / sizeof(lines[0]));

	for (size_t i = 0; i < nlines; i++) {
		term_fputs(lines[i], out);
		fputc('\n', out);
	}
	top_format_columns(s, buf, sizeof(buf));
	fprintf(out, "%s\n", buf);
	for (ssize_t i = 0; i < n; i++) {
		top_format_row(s, rows[i], buf, sizeof(buf));
		fprintf(out, "%s\n", buf);
	}
	fprintf(out, "\n");
}

/* A JSON string: quotes, backslashes and control bytes escaped; other
 * bytes as they are (names come from the kernel and symbol tables). */
static void print_json(struct top_session *s, FILE *out)
{
	const struct top_header *h = top_model_header(s->model);
	const struct top_row *const *rows;
	ssize_t n = top_model_view(s->model, TOP_SORT_CPU, NULL, &rows);
	struct json_out js, *j = &js;

	json_out_init(j, out);
	json_object(j);
	json_member_uint(j, "snapshot", (uint64_t)s->shown + 1);
	json_member_fixed(j, "interval", h->interval, 3);
	json_member_fixed(j, "uptime", h->uptime, 2);
	json_key(j, "load");
	json_array(j);
	for (int i = 0; i < 3; i++)
		json_fixed(j, h->load[i], 2);
	json_end(j);
	json_key(j, "cpu");
	json_object(j);
	json_member_fixed(j, "busy", h->all.busy, 1);
	json_member_fixed(j, "user", h->all.user, 1);
	json_member_fixed(j, "sys", h->all.sys, 1);
	json_end(j);
	json_key(j, "cpus");
	json_array(j);
	for (size_t i = 0; i < h->ncpus; i++)
		json_fixed(j, h->cpus[i].busy, 1);
	json_end(j);
	json_member_uint(j, "mem_total_kb", h->mem_total_kb);
	json_member_uint(j, "mem_available_kb", h->mem_available_kb);
	json_key(j, "targets");
	json_object(j);
	json_member_uint(j, "processes", h->processes);
	json_member_uint(j, "threads", h->threads);
	json_member_fixed(j, "cpu", h->cpu, 1);
	json_member_uint(j, "rss_kb", h->rss_kb);
	json_member_fixed(j, "csw_per_s", h->csw_rate, 1);
	json_end(j);
	json_member_fixed(j, "self_cpu", h->self_cpu, 2);
	json_member_uint(j, "samples", h->samples);
	json_member_raw(j, "sampling", s->sampler ? "true" : "false");
	if (s->sampler) {
		/* Since top started: records the kernel could not write, and
		 * samples of processes not watched that recce read only to
		 * drop them (none where the kernel picks the targets'). */
		struct top_sampler_stats st;
		top_sampler_get_stats(s->sampler, &st);
		json_member_uint(j, "lost", st.lost);
		json_member_uint(j, "others_dropped", st.others);
	}
	if (!s->sampler)
		json_member_string(j, "sampling_off", s->sampling_off);
	json_key(j, "events");
	json_array(j);
	for (size_t i = 0; i < s->nevents; i++)
		json_string(j, s->events[i]);
	json_end(j);
	json_key(j, "rows");
	json_array(j);
	for (ssize_t i = 0; i < n; i++) {
		const struct top_row *r = rows[i];
		char state[2] = {r->state, 0};
		json_object(j);
		json_key(j, "pid");
		json_int(j, r->pid);
		json_key(j, "tid");
		json_int(j, r->tid);
		json_member_string(j, "name", r->name);
		json_member_string(j, "state", state);
		json_member_fixed(j, "cpu", r->cpu_user + r->cpu_sys, 1);
		json_member_fixed(j, "cpu_user", r->cpu_user, 1);
		json_member_fixed(j, "cpu_sys", r->cpu_sys, 1);
		json_member_fixed(j, "vcsw_per_s", r->vcsw_rate, 1);
		json_member_fixed(j, "ivcsw_per_s", r->ivcsw_rate, 1);
		json_member_uint(j, "rss_kb", r->rss_kb);
		json_key(j, "threads");
		json_int(j, r->nthreads);
		json_member_uint(j, "samples", r->samples);
		json_member_string(j, "hot", r->hot);
		json_member_fixed(j, "hot_share", r->hot_share, 3);
		json_member_string(j, "last", r->last);
		json_end(j);
	}
	json_end(j);
	json_end(j);
	putc('\n', out);
}

void top_batch_print(struct top_session *s, FILE *out)
{
	if (s->json)
		print_json(s, out);
	else
		print_text(s, out);
	fflush(out);
}
