/*
 * Line reading and number parsing for untrusted text files (see lines.h).
 */
#include "util/lines.h"

#include <errno.h>
#include <string.h>

int lines_read(FILE *f, char *buf, size_t size)
{
	if (!fgets(buf, (int)(size > 0x7fffffff ? 0x7fffffff : size), f))
		return 0;
	size_t len = strlen(buf);
	if (len > 0 && buf[len - 1] == '\n') {
		buf[len - 1] = '\0';
		return 1;
	}
	/* The buffer is full or the file ended without a newline: the line
	 * fits if nothing but a newline or the end follows. */
	int c = getc(f);
	if (c == '\n' || c == EOF)
		return 1;
	while ((c = getc(f)) != EOF && c != '\n')
		;
	buf[0] = '\0';
	return -1;
}

static int digit_value(char c, unsigned base)
{
	unsigned v;

	if (c >= '0' && c <= '9')
		v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		v = (unsigned)(c - 'a') + 10;
	else if (c >= 'A' && c <= 'F')
		v = (unsigned)(c - 'A') + 10;
	else
		return -1;
	return v < base ? (int)v : -1;
}

static int parse_base(const char **p, unsigned base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (digit_value(*s, base) < 0)
		return -EINVAL;
	while ((d = digit_value(*s, base)) >= 0) {
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return -ERANGE;
		v = v * base + (unsigned)d;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int lines_parse_hex(const char **p, uint64_t *out)
{
	const char *s = *p;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit_value(s[2], 16) >= 0)
		s += 2;
	int rc = parse_base(&s, 16, out);
	if (rc == 0)
		*p = s;
	return rc;
}

int lines_parse_dec(const char **p, uint64_t *out)
{
	return parse_base(p, 10, out);
}

size_t lines_skip_blanks(const char **p)
{
	size_t n = 0;

	while ((*p)[n] == ' ' || (*p)[n] == '\t')
		n++;
	*p += n;
	return n;
}

int lines_key_numbers(const char *path, const char *key, uint64_t *v, int n)
{
	char line[512];
	size_t klen = strlen(key);
	int got, found = 0;

	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((got = lines_read(f, line, sizeof(line))) != 0) {
		if (got < 0 || strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		const char *p = line + klen + 1;
		while (found < n && lines_skip_blanks(&p) > 0 &&
		       lines_parse_dec(&p, &v[found]) == 0)
			found++;
		break;
	}
	fclose(f);
	return found;
}
