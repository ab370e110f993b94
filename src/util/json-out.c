/*
 * JSON output (see json-out.h): the streaming writer and its values. UTF-8 is checked as RFC 3629
 * says: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
#include "util/json-out.h"

#include <inttypes.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_valid(const unsigned char *s)
{
	uint32_t c = s[0], min;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	return c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ? 0 : n;
}

void json_put_string(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");

	putc('"', out);
	while (*u) {
		size_t n;

		if (*u == '"' || *u == '\\') {
			putc('\\', out);
			putc(*u++, out);
		} else if (*u < 0x20) {
			fprintf(out, "\\u%04x", *u++);
		} else if (*u < 0x80) {
			putc(*u++, out);
		} else if ((n = utf8_valid(u)) > 0) {
			fwrite(u, 1, n, out);
			u += n;
		} else {
			fputs("\\ufffd", out);
			u++;
		}
	}
	putc('"', out);
}

void json_put_us(FILE *out, int64_t ns)
{
	if (ns < 0) {
		putc('-', out);
		ns = -ns;
	}
	fprintf(out, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

void json_out_init(struct json_out *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

/* Before a value or a key: the comma, if the container has a member. */
static void next_member(struct json_out *j)
{
	if (j->keyed) {
		j->keyed = 0;
		return;
	}
	if (j->depth == 0)
		return;
	uint32_t bit = 1u << (j->depth - 1);
	if (j->had & bit)
		putc(',', j->out);
	j->had |= bit;
	if (j->line) {
		putc('\n', j->out);
		fputs(j->line, j->out);
		j->line = NULL;
	}
}

static void open_container(struct json_out *j, int object)
{
	next_member(j);
	putc(object ? '{' : '[', j->out);
	if (j->depth >= JSON_MAX_DEPTH)
		return;
	uint32_t bit = 1u << j->depth;
	j->had &= ~bit;
	j->object = object ? j->object | bit : j->object & ~bit;
	j->depth++;
}

void json_object(struct json_out *j)
{
	open_container(j, 1);
}

void json_array(struct json_out *j)
{
	open_container(j, 0);
}

void json_end(struct json_out *j)
{
	if (j->depth == 0)
		return;
	j->depth--;
	if (j->line) {
		putc('\n', j->out);
		fputs(j->line, j->out);
		j->line = NULL;
	}
	putc(j->object & (1u << j->depth) ? '}' : ']', j->out);
}

void json_key(struct json_out *j, const char *key)
{
	next_member(j);
	json_put_string(j->out, key);
	putc(':', j->out);
	j->keyed = 1;
}

void json_string(struct json_out *j, const char *s)
{
	next_member(j);
	if (s)
		json_put_string(j->out, s);
	else
		fputs("null", j->out);
}

void json_int(struct json_out *j, int64_t v)
{
	next_member(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json_out *j, uint64_t v)
{
	next_member(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_fixed(struct json_out *j, double v, int decimals)
{
	next_member(j);
	fprintf(j->out, "%.*f", decimals, v);
}

void json_us(struct json_out *j, int64_t ns)
{
	next_member(j);
	json_put_us(j->out, ns);
}

void json_bytes(struct json_out *j, const char *s)
{
	next_member(j);
	putc('"', j->out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(j->out, "\\u%04x", *p);
		else
			putc(*p, j->out);
	}
	putc('"', j->out);
}

void json_raw(struct json_out *j, const char *text)
{
	next_member(j);
	fputs(text, j->out);
}

void json_member_uint(struct json_out *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_member_string(struct json_out *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_member_fixed(struct json_out *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	json_fixed(j, v, decimals);
}

void json_member_raw(struct json_out *j, const char *key, const char *text)
{
	json_key(j, key);
	json_raw(j, text);
}

void json_newline(struct json_out *j, const char *indent)
{
	j->line = indent;
}
