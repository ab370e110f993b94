/*
 * JSON output helpers (see json-out.h). UTF-8 is checked as RFC 3629 says:
 * no overlong forms, no surrogates, nothing above U+10FFFF.
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
