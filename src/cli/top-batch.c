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
	char hot[160], rkib[32], name[64], fn[128], last[128];

	/* Names come from the target: escaped for the terminal. */
	if (r->hot)
		snprintf(hot, sizeof(hot), "%s (%.0f%%)", term_safe(r->hot, fn, sizeof(fn)),
			 r->hot_share * 100);
	else
		snprintf(hot, sizeof(hot), "-");
	format_kib(rkib, sizeof(rkib), r->rss_kb);
	snprintf(buf, len, "%7d %7ld %-15s %c %6.1f %6.1f %6.1f %7.0f %7.0f %9s  %-32s %s",
		 (int)r->pid, s->npids ? (long)r->tid : r->nthreads,
		 term_safe(r->name, name, sizeof(name)), r->state, r->cpu_user + r->cpu_sys,
		 r->cpu_user, r->cpu_sys, r->vcsw_rate, r->ivcsw_rate, rkib, hot,
		 r->last ? term_safe(r->last, last, sizeof(last)) : "-");
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
static void put_json_string(FILE *out, const char *str)
{
	if (!str) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void print_json(struct top_session *s, FILE *out)
{
	const struct top_header *h = top_model_header(s->model);
	const struct top_row *const *rows;
	ssize_t n = top_model_view(s->model, TOP_SORT_CPU, NULL, &rows);

	fprintf(out, "{\"snapshot\":%lld,\"interval\":%.3f,\"uptime\":%.2f,", s->shown + 1,
		h->interval, h->uptime);
	fprintf(out, "\"load\":[%.2f,%.2f,%.2f],", h->load[0], h->load[1], h->load[2]);
	fprintf(out, "\"cpu\":{\"busy\":%.1f,\"user\":%.1f,\"sys\":%.1f},\"cpus\":[", h->all.busy,
		h->all.user, h->all.sys);
	for (size_t i = 0; i < h->ncpus; i++)
		fprintf(out, "%s%.1f", i ? "," : "", h->cpus[i].busy);
	fprintf(out, "],\"mem_total_kb\":%llu,\"mem_available_kb\":%llu,",
		(unsigned long long)h->mem_total_kb, (unsigned long long)h->mem_available_kb);
	fprintf(out,
		"\"targets\":{\"processes\":%zu,\"threads\":%zu,\"cpu\":%.1f,\"rss_kb\":%llu,"
		"\"csw_per_s\":%.1f},",
		h->processes, h->threads, h->cpu, (unsigned long long)h->rss_kb, h->csw_rate);
	fprintf(out, "\"self_cpu\":%.2f,\"samples\":%llu,\"sampling\":%s,", h->self_cpu,
		(unsigned long long)h->samples, s->sampler ? "true" : "false");
	if (!s->sampler) {
		fputs("\"sampling_off\":", out);
		put_json_string(out, s->sampling_off);
		fputc(',', out);
	}
	fputs("\"events\":[", out);
	for (size_t i = 0; i < s->nevents; i++) {
		if (i)
			fputc(',', out);
		put_json_string(out, s->events[i]);
	}
	fputs("],\"rows\":[", out);
	for (ssize_t i = 0; i < n; i++) {
		const struct top_row *r = rows[i];
		char state[2] = {r->state, 0};
		fprintf(out, "%s{\"pid\":%d,\"tid\":%d,\"name\":", i ? "," : "", (int)r->pid,
			(int)r->tid);
		put_json_string(out, r->name);
		fputs(",\"state\":", out);
		put_json_string(out, state);
		fprintf(
		    out,
		    ",\"cpu\":%.1f,\"cpu_user\":%.1f,\"cpu_sys\":%.1f,\"vcsw_per_s\":%.1f,"
		    "\"ivcsw_per_s\":%.1f,\"rss_kb\":%llu,\"threads\":%ld,\"samples\":%u,\"hot\":",
		    r->cpu_user + r->cpu_sys, r->cpu_user, r->cpu_sys, r->vcsw_rate, r->ivcsw_rate,
		    (unsigned long long)r->rss_kb, r->nthreads, r->samples);
		put_json_string(out, r->hot);
		fprintf(out, ",\"hot_share\":%.3f,\"last\":", r->hot_share);
		put_json_string(out, r->last);
		fputc('}', out);
	}
	fputs("]}\n", out);
}

void top_batch_print(struct top_session *s, FILE *out)
{
	if (s->json)
		print_json(s, out);
	else
		print_text(s, out);
	fflush(out);
}
