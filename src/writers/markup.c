/*
 * Text escaped for XML and HTML (see markup.h).
 */
#include "writers/markup.h"

#include <stdint.h>
#include <string.h>

static size_t utf8_char(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void markup_escape_n(FILE *out, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, copied = 0; /* s[copied..i) is still to be written as is */

	while (i < len) {
		const char *with;
		uint32_t cp;
		size_t n = 1;

		if (u[i] >= 0x20 && u[i] < 0x80 && u[i] != '&' && u[i] != '<' && u[i] != '>' &&
		    u[i] != '"' && u[i] != '\'') {
			i++;
			continue;
		}
		if (u[i] >= 0x80) {
			n = utf8_char(u + i, len - i, &cp);
			if (n > 0 && cp != 0xfffe && cp != 0xffff) {
				i += n;
				continue;
			}
			n = n ? n : 1;
		}
		switch (u[i]) {
		case '&':
			with = "&amp;";
			break;
		case '<':
			with = "&lt;";
			break;
		case '>':
			with = "&gt;";
			break;
		case '"':
			with = "&quot;";
			break;
		case '\'':
			with = "&apos;";
			break;
		case '\t':
		case '\n':
		case '\r':
			with = " ";
			break;
		default:
			with = "\xef\xbf\xbd"; /* U+FFFD */
		}
		fwrite(s + copied, 1, i - copied, out);
		fputs(with, out);
		i += n;
		copied = i;
	}
	fwrite(s + copied, 1, i - copied, out);
}

void markup_escape(FILE *out, const char *s)
{
	markup_escape_n(out, s, strlen(s));
}
