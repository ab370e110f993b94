/*
 * Merging sequence events into messages (seq-merge.h): every SEQ_* event
 * of every source in one array, sorted by trace id, serial and kind, then
 * walked one serial at a time, pairing sends with receives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/seq-merge.h"
#include "util/array.h"

struct item {
	uint64_t id_hi, id_lo, serial, last, real_ns, order;
	uint16_t kind;
	const char *label;
	int src;
	int32_t tid;
	int party;
};

static int kind_rank(uint16_t k)
{
	return k == RECCE_EV_SEQ_BEGIN	? 0
	       : k == RECCE_EV_SEQ_SEND ? 1
	       : k == RECCE_EV_SEQ_RECV ? 2
					: 3;
}

static int by_trace(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->id_hi != y->id_hi)
		return x->id_hi < y->id_hi ? -1 : 1;
	if (x->id_lo != y->id_lo)
		return x->id_lo < y->id_lo ? -1 : 1;
	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (kind_rank(x->kind) != kind_rank(y->kind))
		return kind_rank(x->kind) - kind_rank(y->kind);
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_start(const void *a, const void *b)
{
	const struct seq_trace *x = a, *y = b;

	if (x->first_real_ns != y->first_real_ns)
		return x->first_real_ns < y->first_real_ns ? -1 : 1;
	return x->id_hi < y->id_hi ? -1 : x->id_hi > y->id_hi;
}

/* Participants by program name, told apart by pid and host when needed. */
static void name_sources(struct seq_source *src, size_t nsrc)
{
	int hosts_differ = 0;

	for (size_t i = 1; i < nsrc; i++)
		if (strncmp(src[i].r->hdr.host, src[0].r->hdr.host, sizeof(src[0].r->hdr.host)) !=
		    0)
			hosts_differ = 1;
	for (size_t i = 0; i < nsrc; i++) {
		const struct recce_file_header *h = &src[i].r->hdr;
		int same = 0;
		for (size_t j = 0; j < nsrc; j++)
			if (j != i && strncmp(src[j].r->hdr.comm, h->comm, sizeof(h->comm)) == 0)
				same = 1;
		int n =
		    snprintf(src[i].name, sizeof(src[i].name), "%.16s", h->comm[0] ? h->comm : "?");
		if (same)
			n += snprintf(src[i].name + n, sizeof(src[i].name) - (size_t)n, " (%d)",
				      (int)h->pid);
		if (hosts_differ)
			snprintf(src[i].name + n, sizeof(src[i].name) - (size_t)n, "@%.63s",
				 h->host);
	}
}

static int add_msg(struct seq_trace *t, size_t *cap, const struct item *send,
		   const struct item *recv)
{
	struct seq_msg *grown = array_reserve(t->msgs, cap, t->nmsgs + 1, sizeof(*t->msgs));
	if (!grown)
		return -ENOMEM;
	t->msgs = grown;
	const struct item *any = send ? send : recv;
	t->msgs[t->nmsgs++] = (struct seq_msg){
	    .serial = any->serial,
	    .last = any->last,
	    .label = any->label,
	    .from = send ? send->party : -1,
	    .to = recv ? recv->party : -1,
	    .from_tid = send ? send->tid : 0,
	    .to_tid = recv ? recv->tid : 0,
	    .send_real_ns = send ? send->real_ns : 0,
	    .recv_real_ns = recv ? recv->real_ns : 0,
	};
	return 0;
}

/* Pairs the sends and receives of one serial, it[0..n). */
static int pair_serial(struct seq_trace *t, size_t *cap, size_t *mcap, const struct item *it,
		       size_t n)
{
	size_t nsend = 0, nrecv = 0;

	for (size_t i = 0; i < n; i++) {
		if (it[i].kind == RECCE_EV_SEQ_SEND)
			nsend++;
		else if (it[i].kind == RECCE_EV_SEQ_RECV)
			nrecv++;
		else {
			struct seq_mark *grown =
			    array_reserve(t->marks, mcap, t->nmarks + 1, sizeof(*t->marks));
			if (!grown)
				return -ENOMEM;
			t->marks = grown;
			t->marks[t->nmarks++] =
			    (struct seq_mark){it[i].serial, it[i].kind, it[i].label,
					      it[i].party,  it[i].tid,	it[i].real_ns};
		}
	}
	/* Sorted: the sends come before the receives. */
	const struct item *sends = it, *recvs = it;
	while (recvs < it + n && recvs->kind != RECCE_EV_SEQ_RECV)
		recvs++;
	while (sends < it + n && sends->kind != RECCE_EV_SEQ_SEND)
		sends++;
	for (size_t i = 0; i < (nrecv > nsend ? nrecv : nsend); i++) {
		/* One send received by several (a broadcast) is one arrow each. */
		const struct item *s = nsend ? &sends[i < nsend ? i : nsend - 1] : NULL;
		const struct item *r = i < nrecv ? &recvs[i] : NULL;
		if (i >= nsend && nsend > 1)
			s = NULL;
		int err = add_msg(t, cap, s, r);
		if (err)
			return err;
	}
	return 0;
}

/* The name of thread tid as the source's reader saw it. */
static const char *thread_name(const struct seq_source *src, int32_t tid)
{
	for (size_t i = src->r->nthreads; i-- > 0;)
		if (src->r->threads[i].tid == tid)
			return src->r->threads[i].name;
	return "?";
}

/*
 * Gives every item its participant: its process, or its thread when
 * several threads of the process carry tokens. Participants are numbered
 * in the order the items come (the caller sorts them by time).
 */
static int assign_parties(struct seq_source *src, size_t nsrc, struct item *items, size_t n,
			  struct seq_result *out)
{
	int32_t *first_tid = calloc(nsrc ? nsrc : 1, sizeof(*first_tid));
	char *multi = calloc(nsrc ? nsrc : 1, 1);
	size_t cap = 0;
	int err = 0;

	if (!first_tid || !multi) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int s = items[i].src;
		if (!first_tid[s])
			first_tid[s] = items[i].tid;
		else if (first_tid[s] != items[i].tid)
			multi[s] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		int s = items[i].src;
		int32_t tid = multi[s] ? items[i].tid : 0;
		size_t k = 0;
		while (k < out->nparties &&
		       (out->parties[k].src != s || out->parties[k].tid != tid))
			k++;
		if (k == out->nparties) {
			struct seq_party *grown =
			    array_reserve(out->parties, &cap, k + 1, sizeof(*out->parties));
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			out->parties = grown;
			struct seq_party *p = &out->parties[out->nparties++];
			p->src = s;
			p->tid = tid;
			if (tid)
				snprintf(p->name, sizeof(p->name), "%s/%.16s", src[s].name,
					 thread_name(&src[s], tid));
			else
				snprintf(p->name, sizeof(p->name), "%s", src[s].name);
		}
		items[i].party = (int)k;
	}
out:
	free(first_tid);
	free(multi);
	return err;
}

static int by_when(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->real_ns != y->real_ns)
		return x->real_ns < y->real_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int seq_merge(struct seq_source *src, size_t nsrc, struct seq_result *out)
{
	struct item *items = NULL;
	size_t n = 0, cap = 0, tcap = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	name_sources(src, nsrc);
	for (size_t s = 0; s < nsrc; s++)
		for (size_t i = 0; i < src[s].n; i++) {
			const struct ring_event *e = &src[s].ev[i];
			if (e->kind < RECCE_EV_SEQ_BEGIN || e->kind > RECCE_EV_SEQ_END)
				continue;
			struct item *grown = array_reserve(items, &cap, n + 1, sizeof(*items));
			if (!grown)
				goto out;
			items = grown;
			items[n] = (struct item){e->id_hi,
						 e->id_lo,
						 (uint64_t)e->value,
						 e->extra,
						 ring_reader_realtime(src[s].r, e->time_ns),
						 n,
						 e->kind,
						 e->name,
						 (int)s,
						 e->tid,
						 0};
			n++;
		}
	/* Participants in the order they first act, then the items by trace. */
	if (n)
		qsort(items, n, sizeof(*items), by_when);
	if (assign_parties(src, nsrc, items, n, out) != 0)
		goto out;
	if (n)
		qsort(items, n, sizeof(*items), by_trace);
	for (size_t i = 0; i < n;) {
		size_t end = i, mcap = 0, kcap = 0;
		while (end < n && items[end].id_hi == items[i].id_hi &&
		       items[end].id_lo == items[i].id_lo)
			end++;
		struct seq_trace *grown =
		    array_reserve(out->traces, &tcap, out->ntraces + 1, sizeof(*out->traces));
		if (!grown)
			goto out;
		out->traces = grown;
		struct seq_trace *t = &out->traces[out->ntraces++];
		memset(t, 0, sizeof(*t));
		t->id_hi = items[i].id_hi;
		t->id_lo = items[i].id_lo;
		t->label = items[i].label;
		t->first_real_ns = UINT64_MAX;
		for (size_t k = i; k < end; k++) {
			if (items[k].kind == RECCE_EV_SEQ_BEGIN)
				t->label = items[k].label;
			if (items[k].real_ns < t->first_real_ns)
				t->first_real_ns = items[k].real_ns;
		}
		for (size_t k = i; k < end;) {
			size_t e2 = k;
			while (e2 < end && items[e2].serial == items[k].serial)
				e2++;
			if ((err = pair_serial(t, &mcap, &kcap, items + k, e2 - k)) != 0)
				goto out;
			err = -ENOMEM;
			k = e2;
		}
		i = end;
	}
	if (out->ntraces)
		qsort(out->traces, out->ntraces, sizeof(*out->traces), by_start);
	err = 0;
out:
	free(items);
	if (err)
		seq_result_release(out);
	return err;
}

void seq_result_release(struct seq_result *res)
{
	for (size_t i = 0; i < res->ntraces; i++) {
		free(res->traces[i].msgs);
		free(res->traces[i].marks);
	}
	free(res->traces);
	free(res->parties);
	memset(res, 0, sizeof(*res));
}
