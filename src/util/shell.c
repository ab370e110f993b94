/*
 * Shell quoting of command lines (see shell.h).
 */
#include "util/shell.h"

#include <stdlib.h>
#include <string.h>

static int safe_word(const char *w)
{
	if (!*w)
		return 0;
	for (; *w; w++)
		if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') ||
		      (*w >= '0' && *w <= '9') || strchr("_@%+=:,./-", *w)))
			return 0;
	return 1;
}

char *shell_join(const char *prefix, const char *const *argv, size_t argc)
{
	size_t len = (prefix ? strlen(prefix) : 0) + 1;

	/* At worst every byte is a quote, written as 4 bytes, plus 3. */
	for (size_t i = 0; i < argc; i++)
		len += 4 * strlen(argv[i]) + 3;
	char *s = malloc(len), *at = s;
	if (!s)
		return NULL;
	if (prefix) {
		size_t n = strlen(prefix);
		memcpy(at, prefix, n);
		at += n;
	}
	for (size_t i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (at != s)
			*at++ = ' ';
		if (safe_word(w)) {
			size_t n = strlen(w);
			memcpy(at, w, n);
			at += n;
			continue;
		}
		*at++ = '\'';
		for (; *w; w++) {
			if (*w == '\'') {
				memcpy(at, "'\\''", 4);
				at += 4;
			} else {
				*at++ = *w;
			}
		}
		*at++ = '\'';
	}
	*at = '\0';
	return s;
}
