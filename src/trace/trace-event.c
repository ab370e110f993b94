/*
 * Trace events: condition lookup and the text, JSON and Chrome trace
 * renderings shared by `recce trace` and `recce replay`, so a replayed
 * file prints exactly as the live trace did.
 */
#include "trace/trace-event.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "trace/trace-hist.h"
#include "util/json-out.h"
#include "util/term-safe.h"

void trace_copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
}

const char *trace_record_py_file(const struct trace_record *r, int *cut)
{
	if (strncmp(r->function, "py:", 3) != 0)
		return NULL;
	for (int i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *arg = &r->args[i];
		if (strcmp(arg->name, "file") == 0 && arg->kind == TRACE_ARG_STR &&
		    !(arg->flags & TRACE_STR_UNREADABLE)) {
			*cut = !!(arg->flags & TRACE_STR_TRUNCATED);
			return arg->str;
		}
	}
	return NULL;
}

int trace_record_lookup(const char *name, struct trace_value *v, void *record)
{
	const struct trace_record *r = record;

	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		if (strncmp(a->name, name, sizeof(a->name)) != 0 || a->kind == TRACE_ARG_UNKNOWN)
			continue;
		if (a->kind == TRACE_ARG_STR) {
			if (a->flags & TRACE_STR_UNREADABLE)
				return -ENOENT;
			*v = (struct trace_value){1, 0, a->str};
		} else {
			*v = (struct trace_value){0, (int64_t)a->value, NULL};
		}
		return 0;
	}
	if (strncmp(name, "arg", 3) == 0 && name[3] >= '0' && name[3] <= '5' && !name[4]) {
		*v = (struct trace_value){0, (int64_t)r->regs[name[3] - '0'], NULL};
		return 0;
	}
	if (strcmp(name, "function") == 0) {
		/* The name without its object: "handle" of "app:handle",
		 * "app.handle" of "py:app.handle". */
		const char *colon = strchr(r->function, ':');
		*v = (struct trace_value){1, 0, colon ? colon + 1 : r->function};
		return 0;
	}
	if (strcmp(name, "ret") == 0 && r->kind == TRACE_RETURN) {
		*v = (struct trace_value){0, (int64_t)r->ret, NULL};
		return 0;
	}
	return -ENOENT;
}

void trace_format_value(char *buf, size_t len, uint32_t kind, uint64_t v)
{
	switch (kind) {
	case TRACE_ARG_INT:
		snprintf(buf, len, "%" PRId64, (int64_t)v);
		break;
	case TRACE_ARG_UINT:
		snprintf(buf, len, "%" PRIu64, v);
		break;
	case TRACE_ARG_BOOL:
		snprintf(buf, len, "%s", v & 0xff ? "true" : "false");
		break;
	case TRACE_ARG_CHAR:
		if ((v & 0xff) >= 0x20 && (v & 0xff) < 0x7f && (v & 0xff) != '\'' &&
		    (v & 0xff) != '\\')
			snprintf(buf, len, "'%c'", (int)(v & 0xff));
		else
			snprintf(buf, len, "%u", (unsigned)(v & 0xff));
		break;
	case TRACE_ARG_UNKNOWN:
		snprintf(buf, len, "?");
		break;
	case TRACE_ARG_OBJECT:
		snprintf(buf, len, "(object at 0x%" PRIx64 ")", v);
		break;
	default:
		snprintf(buf, len, "0x%" PRIx64, v);
		break;
	}
}

const char *trace_arg_why_text(unsigned why)
{
	switch (why) {
	case TRACE_WHY_FLOAT:
		return "passed in a floating-point register, which a probe does not see";
	case TRACE_WHY_AGGREGATE:
		return "a struct, slice or interface passed by value";
	case TRACE_WHY_WIDE:
		return "wider than a register";
	case TRACE_WHY_PLACE:
		return "its register is not known after an argument passed by value";
	case TRACE_WHY_STACK:
		return "passed on the stack, past the argument registers";
	case TRACE_WHY_OPTIMIZED:
		return "optimized out: the compiler kept no value of it at the call";
	case TRACE_WHY_UNSEEN:
		return "in a register this probe does not record";
	case TRACE_WHY_MEMORY:
		return "in memory this probe did not copy when it fired";
	case TRACE_WHY_OPERAND:
		return "an operand recce cannot place";
	default:
		return "";
	}
}

/* At most max bytes of s in double quotes, with " and \ escaped by a
 * backslash and other bytes outside printable ASCII as C's \xNN. */
static void print_quoted(const char *s, size_t max, FILE *out)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; max-- && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* A string argument in C syntax, non-printable bytes as \xNN. */
static void print_c_string(const struct trace_arg *a, FILE *out)
{
	if (a->flags & TRACE_STR_UNREADABLE) {
		fprintf(out, "0x%" PRIx64, a->value);
		return;
	}
	print_quoted(a->str, sizeof(a->str), out);
	if (a->flags & TRACE_STR_TRUNCATED)
		fputs("...", out);
}

static void print_time(uint64_t ns, FILE *out)
{
	time_t sec = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	char buf[32];

	localtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	fprintf(out, "%s.%06u", buf, (unsigned)(ns % 1000000000ULL / 1000));
}

/* A return whose value is not known: not in rax, or a Python call's. */
static int ret_unseen(const struct trace_record *r)
{
	return r->ret_kind == TRACE_ARG_UNKNOWN || (r->ret_kind == TRACE_ARG_NONE && r->arity < 0);
}

const char *trace_record_ending(const struct trace_record *r, char *buf, size_t len)
{
	char text[sizeof(r->ret_text) + 1];

	if (r->flags & TRACE_RECORD_OPEN)
		return "(still running at exit)";
	if (r->flags & TRACE_RECORD_LOST)
		return "(return lost)";
	if (r->flags & TRACE_RECORD_UNWOUND)
		return "(unwound)";
	if (r->flags & TRACE_RECORD_TAIL)
		return "(tail call)";
	if (r->ret_kind == TRACE_ARG_NONE)
		return r->arity >= 0 ? "ok" : "ended"; /* a Python call: no value seen */
	if (r->ret_kind == TRACE_ARG_UNKNOWN)
		return "(not readable here)";
	trace_copy_str(text, sizeof(text), r->ret_text);
	if ((r->ret_kind == TRACE_ARG_OBJECT || r->ret_kind == TRACE_ARG_RESULTS) && text[0])
		snprintf(buf, len, "%s", text);
	else
		trace_format_value(buf, len, r->ret_kind ? r->ret_kind : TRACE_ARG_HEX, r->ret);
	return buf;
}

void trace_record_print_call(const struct trace_record *r, FILE *out)
{
	char val[64];

	term_fputs(r->function, out);
	fputc('(', out);
	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		char name[sizeof(a->name) + 1];
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(a->name), a->name);
		fputs(i ? ", " : "", out);
		term_fputs(name, out);
		fputc('=', out);
		if (a->kind == TRACE_ARG_STR) {
			print_c_string(a, out);
		} else {
			trace_format_value(val, sizeof(val), a->kind, a->value);
			fputs(val, out);
		}
	}
	fputc(')', out);
}

static void print_text(const struct trace_record *r, FILE *out)
{
	char val[sizeof(r->ret_text) + 64];

	print_time(r->time_ns, out);
	fprintf(out, " <%u> ", (unsigned)r->tid);
	if (r->kind == TRACE_RETURN) {
		term_fputs(r->function, out);
		if (r->arity >= 0)
			fprintf(out, "/%d", (int)r->arity);
		fputs(" --> ", out);
		term_fputs(trace_record_ending(r, val, sizeof(val)), out);
		char d[32];
		/* An unwound call ended somewhere before recce noticed: no
		 * duration is known. */
		trace_format_duration(d, sizeof(d), r->duration_ns);
		if (r->flags & (TRACE_RECORD_UNWOUND | TRACE_RECORD_LOST))
			fputc('\n', out);
		else if (r->flags & TRACE_RECORD_OPEN)
			fprintf(out, "  (%s so far)\n", d);
		else
			fprintf(out, "  (%s)\n", d);
		return;
	}
	trace_record_print_call(r, out);
	if (r->caller[0]) {
		fputs(" <- ", out);
		term_fputs(r->caller, out);
	}
	fputc('\n', out);
}

/* The arguments as an object: numbers, strings (their bytes, each one
 * code point: memory is not text), and null for what was not read. */
static void put_json_args(struct json_out *j, const struct trace_record *r)
{
	char val[64];

	json_object(j);
	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		char name[sizeof(a->name) + 1];
		trace_copy_str(name, sizeof(name), a->name);
		json_key(j, name);
		if (a->kind == TRACE_ARG_STR && !(a->flags & TRACE_STR_UNREADABLE)) {
			char str[sizeof(a->str) + 1];
			trace_copy_str(str, sizeof(str), a->str);
			json_bytes(j, str);
		} else if (a->kind == TRACE_ARG_INT || a->kind == TRACE_ARG_UINT ||
			   a->kind == TRACE_ARG_BOOL || a->kind == TRACE_ARG_CHAR) {
			trace_format_value(val, sizeof(val),
					   a->kind == TRACE_ARG_INT ? a->kind : TRACE_ARG_UINT,
					   a->kind == TRACE_ARG_INT || a->kind == TRACE_ARG_UINT
					       ? a->value
					       : a->value & 0xff);
			json_raw(j, val);
		} else if (a->kind == TRACE_ARG_UNKNOWN) {
			json_raw(j, "null");
		} else {
			trace_format_value(val, sizeof(val), TRACE_ARG_HEX, a->value);
			json_string(j, val);
		}
	}
	json_end(j);
}

/* Why the arguments shown as null were not read: "unread":{"x":"..."}. */
static void put_json_unread(struct json_out *j, const struct trace_record *r)
{
	int n = 0;

	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		if (a->kind != TRACE_ARG_UNKNOWN)
			continue;
		const char *why = trace_arg_why_text(TRACE_ARG_WHY(a->flags));
		char name[sizeof(a->name) + 1];
		trace_copy_str(name, sizeof(name), a->name);
		if (!n++) {
			json_key(j, "unread");
			json_object(j);
		}
		json_key(j, name);
		json_string(j, *why ? why : "not in an integer register");
	}
	if (n)
		json_end(j);
}

/* An object returned in memory: its address, and what was read of it. */
static void put_json_object(struct json_out *j, const struct trace_record *r)
{
	char text[sizeof(r->ret_text) + 1], addr[32];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, r->ret);
	json_key(j, "ret_object");
	json_string(j, addr);
	trace_copy_str(text, sizeof(text), r->ret_text);
	if (text[0]) {
		json_key(j, "ret_text");
		json_bytes(j, text);
	}
}

/* One JSON object a line; host, when not NULL, the host it happened on
 * (a file's bytes: each one code point). */
static void print_json(const struct trace_record *r, const char *host, FILE *out)
{
	struct json_out js, *j = &js;

	json_out_init(j, out);
	json_object(j);
	json_member_uint(j, "time_ns", r->time_ns);
	if (host) {
		json_key(j, "host");
		json_bytes(j, host);
	}
	json_member_uint(j, "pid", (uint32_t)r->pid);
	json_member_uint(j, "tid", (uint32_t)r->tid);
	json_key(j, "event");
	json_string(j, r->kind == TRACE_RETURN ? "return" : "call");
	json_key(j, "function");
	json_string(j, r->function);
	json_key(j, "args");
	put_json_args(j, r);
	put_json_unread(j, r);
	if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_OPEN)) {
		json_member_raw(j, "still_running", "true");
		json_member_uint(j, "duration_ns", r->duration_ns);
	} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_LOST)) {
		json_member_raw(j, "return_lost", "true");
	} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_UNWOUND)) {
		json_member_raw(j, "unwound", "true");
	} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_TAIL)) {
		json_member_raw(j, "tail_call", "true");
		json_member_uint(j, "duration_ns", r->duration_ns);
	} else if (r->kind == TRACE_RETURN) {
		if (r->ret_kind == TRACE_ARG_OBJECT) {
			put_json_object(j, r);
		} else if (r->ret_kind == TRACE_ARG_RESULTS) {
			char text[sizeof(r->ret_text) + 1];
			trace_copy_str(text, sizeof(text), r->ret_text);
			json_key(j, "results");
			json_bytes(j, text);
		} else {
			json_key(j, "ret");
			if (r->ret_kind == TRACE_ARG_INT)
				json_int(j, (int64_t)r->ret);
			else if (ret_unseen(r))
				json_raw(j, "null"); /* not in rax */
			else
				json_uint(j, r->ret);
		}
		json_member_uint(j, "duration_ns", r->duration_ns);
	}
	if (r->caller[0]) {
		json_key(j, "caller");
		json_string(j, r->caller);
	}
	json_end(j);
	putc('\n', out);
}

/* One Chrome trace event: durations from matching B/E pairs. */
static void print_chrome(const struct trace_record *r, FILE *out)
{
	struct json_out js, *j = &js;

	json_out_init(j, out);
	json_object(j);
	json_key(j, "name");
	json_string(j, r->function);
	json_key(j, "ph");
	json_string(j, r->kind == TRACE_RETURN ? "E" : "B");
	json_key(j, "ts");
	json_fixed(j, (double)r->time_ns / 1e3, 3);
	json_member_uint(j, "pid", (uint32_t)r->pid);
	json_member_uint(j, "tid", (uint32_t)r->tid);
	json_key(j, "args");
	if (r->kind == TRACE_CALL) {
		put_json_args(j, r);
		json_end(j);
		return;
	}
	json_object(j);
	if (r->flags & TRACE_RECORD_OPEN) {
		json_member_raw(j, "still_running", "true");
	} else if (r->flags & TRACE_RECORD_LOST) {
		json_member_raw(j, "return_lost", "true");
	} else if (r->flags & TRACE_RECORD_UNWOUND) {
		json_member_raw(j, "unwound", "true");
	} else if (r->flags & TRACE_RECORD_TAIL) {
		json_member_raw(j, "tail_call", "true");
	} else {
		json_key(j, "ret");
		if (ret_unseen(r))
			json_raw(j, "null"); /* not in rax */
		else
			json_int(j, (int64_t)r->ret);
	}
	json_end(j);
	json_end(j);
}

void trace_record_print(const struct trace_record *r, enum trace_format f, int first, FILE *out)
{
	trace_record_print_host(r, f, first, NULL, out);
}

void trace_record_print_host(const struct trace_record *r, enum trace_format f, int first,
			     const char *host, FILE *out)
{
	if (f == TRACE_FORMAT_TEXT)
		print_text(r, out);
	else if (f == TRACE_FORMAT_JSON)
		print_json(r, host, out);
	else {
		if (!first)
			fputs(",\n", out);
		print_chrome(r, out);
	}
}

void trace_chrome_process_name(uint32_t pid, const char *name, int first, FILE *out)
{
	struct json_out js, *j = &js;

	if (!first)
		fputs(",\n", out);
	json_out_init(j, out);
	json_object(j);
	json_member_string(j, "name", "process_name");
	json_member_string(j, "ph", "M");
	json_member_uint(j, "pid", pid);
	json_key(j, "args");
	json_object(j);
	json_key(j, "name");
	json_bytes(j, name);
	json_end(j);
	json_end(j);
}
