/*
 * Printing merged sequences: text, Mermaid and Chrome trace (seq-print.h).
 * Names come from the traced programs, so they are made safe for each
 * format: escaped for terminals, stripped of Mermaid's syntax characters,
 * quoted for JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "events/seq-print.h"
#include "util/json-out.h"
#include "util/term-safe.h"

/* A name Mermaid cannot misread: its separators and line breaks become
 * spaces. */
static const char *mermaid_safe(const char *s, char *buf, size_t cap)
{
	size_t k = 0;

	for (; *s && k + 1 < cap; s++)
		buf[k++] = strchr(";:#\n\r\"<>{}", *s) || (unsigned char)*s < 0x20 ? ' ' : *s;
	buf[k] = '\0';
	return buf;
}

static const char *who(const struct seq_result *res, int i)
{
	return i < 0 ? "?" : res->parties[i].name;
}

/* The cost of pid in trace tr, or NULL. */
static const struct seq_cost *cost_of(const struct seq_costs *c, const struct seq_trace *tr,
				      int32_t pid)
{
	size_t lo = 0, hi = c ? c->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct seq_cost *m = &c->v[mid];
		if (m->id_hi < tr->id_hi ||
		    (m->id_hi == tr->id_hi &&
		     (m->id_lo < tr->id_lo || (m->id_lo == tr->id_lo && m->pid < pid))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (c ? c->n : 0) && c->v[lo].id_hi == tr->id_hi && c->v[lo].id_lo == tr->id_lo &&
	    c->v[lo].pid == pid)
		return &c->v[lo];
	return NULL;
}

/* A cost as people read it: "3.02 ms cpu", or "12 samples". */
static void cost_text(const struct seq_costs *c, const struct seq_cost *k, char *buf, size_t len)
{
	if (strcmp(c->unit, "nanoseconds") == 0)
		snprintf(buf, len, "%.2f ms %s", (double)k->value / 1e6, c->type);
	else
		snprintf(buf, len, "%" PRId64 " %s", k->value, c->type);
}

/* The pid of participant i's process: the one its event file says. */
static int32_t pid_of(const struct seq_source *src, const struct seq_result *res, size_t i)
{
	return src[res->parties[i].src].r->hdr.pid;
}

/* Whether participant i is the first of its process: a process's cost
 * is shown once, however many of its threads carry tokens. */
static int first_of_process(const struct seq_result *res, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (res->parties[k].src == res->parties[i].src)
			return 0;
	return 1;
}

/* Whether process of participant i acts in trace tr. */
static int acts_in(const struct seq_trace *tr, const struct seq_result *res, size_t i)
{
	for (size_t m = 0; m < tr->nmsgs; m++) {
		const struct seq_msg *msg = &tr->msgs[m];
		if ((msg->from >= 0 && res->parties[msg->from].src == res->parties[i].src) ||
		    (msg->to >= 0 && res->parties[msg->to].src == res->parties[i].src))
			return 1;
	}
	for (size_t k = 0; k < tr->nmarks; k++)
		if (res->parties[tr->marks[k].at].src == res->parties[i].src)
			return 1;
	return 0;
}

static void print_text_costs(FILE *out, const struct seq_source *src, const struct seq_result *res,
			     const struct seq_trace *tr, const struct seq_costs *c)
{
	char a[128], v[64];

	for (size_t i = 0; c && i < res->nparties; i++) {
		if (!first_of_process(res, i) || !acts_in(tr, res, i))
			continue;
		int32_t pid = pid_of(src, res, i);
		const struct seq_cost *k = cost_of(c, tr, pid);
		if (!k) {
			fprintf(out, "%8s  %-20s    no samples in %s\n", "PROFILE",
				term_safe(who(res, (int)i), a, sizeof(a)), c->profile);
			continue;
		}
		cost_text(c, k, v, sizeof(v));
		fprintf(out,
			"%8s  %-20s    %s in %" PRIu64 " samples: recce report %s --tag "
			"trace_id=%016" PRIx64 "%016" PRIx64 " --pid %d\n",
			"PROFILE", term_safe(who(res, (int)i), a, sizeof(a)), v, k->samples,
			c->profile, tr->id_hi, tr->id_lo, (int)pid);
	}
}

static void print_text(FILE *out, const struct seq_source *src, const struct seq_result *res,
		       const struct seq_costs *costs)
{
	char a[128], b[128], l[128];

	for (size_t t = 0; t < res->ntraces; t++) {
		const struct seq_trace *tr = &res->traces[t];
		fprintf(out, "%strace %016" PRIx64 "%016" PRIx64 "  %s  (%zu messages)\n",
			t ? "\n" : "", tr->id_hi, tr->id_lo, term_safe(tr->label, l, sizeof(l)),
			tr->nmsgs);
		fprintf(out, "%8s  %-20s    %-20s  %s\n", "SERIAL", "FROM", "TO", "LABEL");
		for (size_t k = 0; k < tr->nmarks; k++)
			if (tr->marks[k].kind == RECCE_EV_SEQ_BEGIN)
				fprintf(out, "%8" PRIu64 "  %-20s    %-20s  %s\n",
					tr->marks[k].serial,
					term_safe(who(res, tr->marks[k].at), a, sizeof(a)),
					"(begins)", term_safe(tr->marks[k].label, l, sizeof(l)));
		for (size_t m = 0; m < tr->nmsgs; m++) {
			const struct seq_msg *msg = &tr->msgs[m];
			fprintf(out, "%8" PRIu64 "  %-20s -> %-20s  %s\n", msg->serial,
				term_safe(who(res, msg->from), a, sizeof(a)),
				term_safe(who(res, msg->to), b, sizeof(b)),
				term_safe(msg->label, l, sizeof(l)));
		}
		print_text_costs(out, src, res, tr, costs);
	}
}

static void print_mermaid(FILE *out, const struct seq_source *src, size_t nsrc,
			  const struct seq_result *res, const struct seq_costs *costs)
{
	char a[128], l[128];
	int unknown = 0;

	fputs("sequenceDiagram\n", out);
	/* Participants in the order they first act; "?" for ends no file
	 * held. */
	for (size_t k = 0; k < res->nparties; k++)
		fprintf(out, "    participant p%zu as %s\n", k,
			mermaid_safe(res->parties[k].name, a, sizeof(a)));
	for (size_t t = 0; t < res->ntraces && !unknown; t++)
		for (size_t m = 0; m < res->traces[t].nmsgs; m++)
			if (res->traces[t].msgs[m].from < 0 || res->traces[t].msgs[m].to < 0)
				unknown = 1;
	if (unknown)
		fputs("    participant unknown as ?\n", out);
	for (size_t t = 0; t < res->ntraces; t++) {
		const struct seq_trace *tr = &res->traces[t];
		for (size_t k = 0; k < tr->nmarks; k++)
			if (tr->marks[k].kind == RECCE_EV_SEQ_BEGIN)
				fprintf(out, "    Note over p%d: %s begins\n", tr->marks[k].at,
					mermaid_safe(tr->marks[k].label, l, sizeof(l)));
		for (size_t m = 0; m < tr->nmsgs; m++) {
			const struct seq_msg *msg = &tr->msgs[m];
			char from[16], to[16];
			snprintf(from, sizeof(from), msg->from < 0 ? "unknown" : "p%d", msg->from);
			snprintf(to, sizeof(to), msg->to < 0 ? "unknown" : "p%d", msg->to);
			fprintf(out, "    %s->>%s: %s %" PRIu64 "\n", from, to,
				mermaid_safe(msg->label, l, sizeof(l)), msg->serial);
		}
		for (size_t k = 0; k < tr->nmarks; k++)
			if (tr->marks[k].kind == RECCE_EV_SEQ_END)
				fprintf(out, "    Note over p%d: %s ends\n", tr->marks[k].at,
					mermaid_safe(tr->marks[k].label, l, sizeof(l)));
		for (size_t i = 0; costs && i < res->nparties; i++) {
			const struct seq_cost *k;
			char v[64];
			if (first_of_process(res, i) && acts_in(tr, res, i) &&
			    (k = cost_of(costs, tr, pid_of(src, res, i)))) {
				cost_text(costs, k, v, sizeof(v));
				fprintf(out, "    Note over p%zu: %s\n", i, v);
			}
		}
	}
}

static void chrome_event(FILE *out, int *first, const char *ph, const char *name, int pid,
			 int32_t tid, uint64_t ns, uint64_t zero, uint64_t flow)
{
	fprintf(out, "%s\n{\"ph\":\"%s\",\"name\":", *first ? "" : ",", ph);
	*first = 0;
	json_put_string(out, name);
	fprintf(out, ",\"cat\":\"seq\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, (int)tid);
	json_put_us(out, (int64_t)(ns - zero));
	if (*ph == 'i')
		fputs(",\"s\":\"t\"", out);
	if (*ph == 's' || *ph == 'f')
		fprintf(out, ",\"id\":%" PRIu64 "%s", flow, *ph == 'f' ? ",\"bp\":\"e\"" : "");
	putc('}', out);
}

/* The Chrome trace's pid of participant i: its source's place, from 1. */
static int src_of(const struct seq_result *res, int i)
{
	return res->parties[i].src + 1;
}

static void print_chrome(FILE *out, const struct seq_source *src, size_t nsrc,
			 const struct seq_result *res)
{
	uint64_t zero = UINT64_MAX, flow = 0;
	int first = 1;

	for (size_t t = 0; t < res->ntraces; t++)
		if (res->traces[t].first_real_ns < zero)
			zero = res->traces[t].first_real_ns;
	fputs("{\"traceEvents\":[", out);
	for (size_t s = 0; s < nsrc; s++) {
		fprintf(
		    out,
		    "%s\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"args\":{\"name\":",
		    first ? "" : ",", s + 1);
		first = 0;
		json_put_string(out, src[s].name);
		fputs("}}", out);
	}
	for (size_t t = 0; t < res->ntraces; t++)
		for (size_t m = 0; m < res->traces[t].nmsgs; m++) {
			const struct seq_msg *msg = &res->traces[t].msgs[m];
			char name[300];
			snprintf(name, sizeof(name), "%s %" PRIu64, msg->label, msg->serial);
			flow++;
			if (msg->from >= 0) {
				chrome_event(out, &first, "i", name, src_of(res, msg->from),
					     msg->from_tid, msg->send_real_ns, zero, 0);
				if (msg->to >= 0)
					chrome_event(out, &first, "s", name, src_of(res, msg->from),
						     msg->from_tid, msg->send_real_ns, zero, flow);
			}
			if (msg->to >= 0) {
				chrome_event(out, &first, "i", name, src_of(res, msg->to),
					     msg->to_tid, msg->recv_real_ns, zero, 0);
				if (msg->from >= 0)
					chrome_event(out, &first, "f", name, src_of(res, msg->to),
						     msg->to_tid, msg->recv_real_ns, zero, flow);
			}
		}
	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", out);
}

void seq_print(FILE *out, enum seq_format f, const struct seq_source *src, size_t nsrc,
	       const struct seq_result *res, const struct seq_costs *costs)
{
	if (f == SEQ_MERMAID)
		print_mermaid(out, src, nsrc, res, costs);
	else if (f == SEQ_CHROME)
		print_chrome(out, src, nsrc, res);
	else
		print_text(out, src, res, costs);
}
