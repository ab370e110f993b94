/*
 * Text put into XML (the flamegraph SVG, plots) and HTML (the profile
 * page). Names come from the target's binaries, so they are untrusted:
 * besides the five markup characters, anything that is not valid UTF-8 or
 * not allowed in an XML document becomes U+FFFD (tabs and line breaks a
 * space), which keeps the file well-formed whatever the bytes.
 */
#ifndef RECCE_WRITERS_MARKUP_H
#define RECCE_WRITERS_MARKUP_H

#include <stddef.h>
#include <stdio.h>

void markup_escape(FILE *out, const char *s);
void markup_escape_n(FILE *out, const char *s, size_t len);

#endif
