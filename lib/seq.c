/*
 * Sequence tokens, Erlang's seq_trace for any program: a token that rides
 * along with the messages of one request, across threads, processes and
 * machines, so that `recce seq` can merge what each wrote into one
 * picture of the request.
 *
 * A token is a trace id (128 bits, as W3C trace context has) and a label,
 * held per thread, with seq_trace's two counters: last, the serial of the
 * message this thread last received, and current, which a send raises
 * by one. A receive sets last to the message's serial and current to the
 * larger of its own and the message's, so serials grow along every causal
 * path (a Lamport clock) and order the messages without trusting any
 * machine's clock.
 *
 * The header a send writes is a W3C traceparent, then ";recce=LAST.CURRENT"
 * and the label:
 *
 *   00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa00000003-01;recce=2.3.ask-fib
 *
 * Its first 55 characters are a valid traceparent (an OpenTelemetry
 * service takes the trace id from them); recce_seq_extract() takes a bare
 * traceparent too. Sends, receives, begins and ends are events in the
 * thread's ring (SEQ_* records, each followed by a SEQ_ID record with the
 * trace id).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recce.h"

#include "internal.h"

#define LABEL_MAX 64

struct token {
	int active;
	uint64_t id[2]; /* the trace id: high, low */
	uint64_t last, current;
	uint64_t seed;
	const char *label; /* as the program gave it, or label_buf */
	char label_buf[LABEL_MAX + 1];
};

static __thread struct token tok __attribute__((tls_model("initial-exec")));

/* splitmix64: ids that differ, not secrets. */
static uint64_t next_random(void)
{
	if (!tok.seed)
		tok.seed = clock_read() ^ ((uint64_t)(uintptr_t)&tok << 16) ^ 0x9e3779b97f4a7c15ULL;
	uint64_t z = (tok.seed += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int recce_seq_begin(const char *label)
{
	if (!label)
		return -EINVAL;
	tok.active = 1;
	tok.id[0] = next_random() ^ clock_read();
	tok.id[1] = next_random();
	tok.last = tok.current = 0;
	tok.label = label;
	lib_put_seq(RECCE_EV_SEQ_BEGIN, label, 0, 0, tok.id);
	return 0;
}

/* The characters a label keeps in a header; others become '_'. */
static int label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == ':';
}

size_t recce_seq_inject(char *buf, size_t len)
{
	char out[RECCE_SEQ_HEADER_MAX];
	char label[LABEL_MAX + 1];
	size_t k = 0;

	if (!tok.active || !buf)
		return 0;
	/* The label as header-safe characters. */
	for (const char *p = tok.label; *p && k < LABEL_MAX; p++, k++) {
		label[k] = label_char(*p) ? *p : '_';
	}
	label[k] = '\0';
	uint64_t current = tok.current + 1;
	int n = snprintf(out, sizeof(out), "00-%016llx%016llx-%08llx%08llx-01;recce=%llu.%llu.%s",
			 (unsigned long long)tok.id[0], (unsigned long long)tok.id[1],
			 (unsigned long long)(tok.id[1] >> 32),
			 (unsigned long long)(current & 0xffffffffu), (unsigned long long)tok.last,
			 (unsigned long long)current, label);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(out))
		return 0;
	memcpy(buf, out, (size_t)n + 1);
	tok.current = current;
	lib_put_seq(RECCE_EV_SEQ_SEND, tok.label, (int64_t)current, tok.last, tok.id);
	return (size_t)n;
}

/* Parses n hex digits; 0 if one is not. */
static int hex(const char *s, int n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return 0;
		*v = *v << 4 | (uint64_t)d;
	}
	return 1;
}

static const char *number(const char *s, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return NULL;
	for (*v = 0; *s >= '0' && *s <= '9'; s++)
		*v = *v * 10 + (uint64_t)(*s - '0');
	return s;
}

int recce_seq_extract(const char *header)
{
	uint64_t id[2], span, flags, version, last = 0, current = 0;

	if (!header || strnlen(header, 55) < 55 || !hex(header, 2, &version) || header[2] != '-' ||
	    !hex(header + 3, 16, &id[0]) || !hex(header + 19, 16, &id[1]) || header[35] != '-' ||
	    !hex(header + 36, 16, &span) || header[52] != '-' || !hex(header + 53, 2, &flags) ||
	    version == 0xff || (id[0] == 0 && id[1] == 0))
		return -EINVAL;
	const char *p = header + 55, *label = "";
	size_t label_len = 0;
	if (strncmp(p, ";recce=", 7) == 0) {
		p = number(p + 7, &last);
		if (!p || *p != '.' || !(p = number(p + 1, &current)))
			return -EINVAL;
		if (*p == '.') {
			label = p + 1;
			while (label_len < LABEL_MAX && label_char(label[label_len]))
				label_len++;
		}
	}
	int same = tok.active && tok.id[0] == id[0] && tok.id[1] == id[1];
	tok.active = 1;
	tok.id[0] = id[0];
	tok.id[1] = id[1];
	tok.last = current;
	tok.current = same && tok.current > current ? tok.current : current;
	memcpy(tok.label_buf, label_len ? label : "seq", label_len ? label_len : 3);
	tok.label_buf[label_len ? label_len : 3] = '\0';
	tok.label = tok.label_buf;
	lib_put_seq(RECCE_EV_SEQ_RECV, tok.label, (int64_t)current, last, tok.id);
	return 0;
}

void recce_seq_end(void)
{
	if (!tok.active)
		return;
	lib_put_seq(RECCE_EV_SEQ_END, tok.label, (int64_t)tok.current, tok.last, tok.id);
	tok.active = 0;
}

int recce_seq_active(void)
{
	return tok.active;
}
