/*
 * Writing JSON as it goes, for every writer of JSON (speedscope, Chrome
 * traces, events, the agent's page, top's batch output): a writer that
 * places the commas itself, so that no caller counts its members, and
 * the values: strings with every character JSON requires escaped and
 * bytes that are not valid UTF-8 (names come from the target's binaries,
 * so they are untrusted) replaced by U+FFFD, so the file always parses.
 */
#ifndef RECCE_JSON_OUT_H
#define RECCE_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

/* Writes s as a quoted JSON string. */
void json_put_string(FILE *out, const char *s);

/* Writes ns nanoseconds as microseconds with three decimals (the Trace
 * Event format's unit), in any locale. */
void json_put_us(FILE *out, int64_t ns);

/* Where a document being written is: how deep, and whether each open
 * object or array has a member already. */
#define JSON_MAX_DEPTH 32
struct json_out {
	FILE *out;
	unsigned depth;
	uint32_t had;	  /* bit d: the container at depth d has a member */
	uint32_t object;  /* bit d: it is an object */
	int keyed;	  /* a key was written: its value comes next, no comma */
	const char *line; /* before the next member: a line break and this indent */
};

void json_out_init(struct json_out *j, FILE *out);

/* Opens an object or an array as the next value; json_end() closes the
 * innermost. Deeper than JSON_MAX_DEPTH is a caller's error (ignored). */
void json_object(struct json_out *j);
void json_array(struct json_out *j);
void json_end(struct json_out *j);

/* The key of the next member of an object (a name recce chooses). */
void json_key(struct json_out *j, const char *key);

/* Values; a NULL string is null. */
void json_string(struct json_out *j, const char *s);
void json_int(struct json_out *j, int64_t v);
void json_uint(struct json_out *j, uint64_t v);
void json_fixed(struct json_out *j, double v, int decimals); /* like printf's %.Nf */
void json_us(struct json_out *j, int64_t ns);
/* Bytes that are not text (a string read from a process's memory): each
 * byte outside printable ASCII is written as the code point of its value
 * (\u00NN), so that none is lost or changed. */
void json_bytes(struct json_out *j, const char *s); /* json_put_us */
/* A value already written as JSON text (a number formatted elsewhere). */
void json_raw(struct json_out *j, const char *text);

/* A member of an object: its key, then its value. */
void json_member_uint(struct json_out *j, const char *key, uint64_t v);
void json_member_string(struct json_out *j, const char *key, const char *s);
void json_member_fixed(struct json_out *j, const char *key, double v, int decimals);
void json_member_raw(struct json_out *j, const char *key, const char *text);

/* Starts the next member on a new line, after indent (for files a
 * person reads, or one event per line). */
void json_newline(struct json_out *j, const char *indent);

#endif
