/*
 * Escaping names for a terminal (see term-safe.h).
 */
#include "util/term-safe.h"

#include <string.h>

/* The length of the control sequence at p (1 for C0 or DEL, 2 for a C1
 * in UTF-8), or 0 when p starts no control. */
static size_t control_at(const unsigned char *p)
{
	if (*p < 0x20 || *p == 0x7f)
		return 1;
	if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

int term_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (control_at(p))
			return 0;
	return 1;
}

/* The escaped form of the control at p, of length n, into out[8]. */
static void escape(const unsigned char *p, size_t n, char out[8])
{
	static const char hex[] = "0123456789abcdef";

	if (n == 1) {
		memcpy(out, "\\x", 2);
		out[2] = hex[*p >> 4];
		out[3] = hex[*p & 15];
		out[4] = 0;
	} else {
		memcpy(out, "\\u00", 4);
		out[4] = hex[p[1] >> 4];
		out[5] = hex[p[1] & 15];
		out[6] = 0;
	}
}

const char *term_safe(const char *s, char *buf, size_t cap)
{
	size_t len = 0;

	if (term_clean(s) || cap == 0)
		return cap == 0 ? "" : s;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = control_at(p);
		char esc[8];
		const char *piece = (const char *)p;
		size_t plen = 1;
		if (n) {
			escape(p, n, esc);
			piece = esc;
			plen = strlen(esc);
		}
		if (len + plen >= cap)
			break;
		memcpy(buf + len, piece, plen);
		len += plen;
		p += n ? n : 1;
	}
	buf[len] = 0;
	return buf;
}

void term_fputs(const char *s, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = control_at(p);
		if (!n) {
			/* A run of clean bytes at once: a trace prints a name
			 * for every event. */
			const unsigned char *q = p + 1;
			while (*q && !control_at(q))
				q++;
			fwrite(p, 1, (size_t)(q - p), out);
			p = q;
			continue;
		}
		char esc[8];
		escape(p, n, esc);
		fputs(esc, out);
		p += n;
	}
}
