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
#include "util/term-safe.h"

void trace_copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
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
	default:
		return "";
	}
}

/* At most max bytes of s in double quotes, with " and \ escaped by a
 * backslash and other bytes outside printable ASCII as JSON's \u00NN, or,
 * unless json, C's \xNN. */
static void print_quoted(const char *s, size_t max, int json, FILE *out)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; max-- && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, json ? "\\u%04x" : "\\x%02x", *p);
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
	print_quoted(a->str, sizeof(a->str), 0, out);
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

static void print_text(const struct trace_record *r, FILE *out)
{
	char val[64];

	print_time(r->time_ns, out);
	fprintf(out, " <%u> ", (unsigned)r->tid);
	if (r->kind == TRACE_RETURN) {
		term_fputs(r->function, out);
		if (r->arity >= 0)
			fprintf(out, "/%d", (int)r->arity);
		trace_format_value(val, sizeof(val), r->ret_kind ? r->ret_kind : TRACE_ARG_HEX,
				   r->ret);
		char text[sizeof(r->ret_text) + 1];
		trace_copy_str(text, sizeof(text), r->ret_text);
		fputs(" --> ", out);
		term_fputs(r->flags & TRACE_RECORD_OPEN	     ? "(still running at exit)"
			   : r->flags & TRACE_RECORD_LOST    ? "(return lost)"
			   : r->flags & TRACE_RECORD_UNWOUND ? "(unwound)"
			   : r->flags & TRACE_RECORD_TAIL    ? "(tail call)"
			   : r->ret_kind == TRACE_ARG_NONE && r->arity >= 0 ? "ok"
			   : r->ret_kind == TRACE_ARG_UNKNOWN		    ? "(not readable here)"
			   : r->ret_kind == TRACE_ARG_OBJECT && text[0]	    ? text
									    : val,
			   out);
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
	if (r->caller[0]) {
		fputs(" <- ", out);
		term_fputs(r->caller, out);
	}
	fputc('\n', out);
}

void trace_json_string(const char *s, FILE *out)
{
	print_quoted(s, SIZE_MAX, 1, out);
}

/* An object returned in memory: its address, and what was read of it. */
static void print_json_object(const struct trace_record *r, FILE *out)
{
	char text[sizeof(r->ret_text) + 1];

	fprintf(out, ",\"ret_object\":\"0x%" PRIx64 "\"", r->ret);
	trace_copy_str(text, sizeof(text), r->ret_text);
	if (text[0]) {
		fputs(",\"ret_text\":", out);
		trace_json_string(text, out);
	}
}

static void print_json_args(const struct trace_record *r, FILE *out)
{
	char val[64];

	fputs("{", out);
	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		char name[sizeof(a->name) + 1];
		trace_copy_str(name, sizeof(name), a->name);
		fputs(i ? "," : "", out);
		trace_json_string(name, out);
		fputc(':', out);
		if (a->kind == TRACE_ARG_STR && !(a->flags & TRACE_STR_UNREADABLE)) {
			char s[sizeof(a->str) + 1];
			trace_copy_str(s, sizeof(s), a->str);
			trace_json_string(s, out);
		} else if (a->kind == TRACE_ARG_INT || a->kind == TRACE_ARG_UINT ||
			   a->kind == TRACE_ARG_BOOL || a->kind == TRACE_ARG_CHAR) {
			trace_format_value(val, sizeof(val),
					   a->kind == TRACE_ARG_INT ? a->kind : TRACE_ARG_UINT,
					   a->kind == TRACE_ARG_INT || a->kind == TRACE_ARG_UINT
					       ? a->value
					       : a->value & 0xff);
			fputs(val, out);
		} else if (a->kind == TRACE_ARG_UNKNOWN) {
			fputs("null", out);
		} else {
			trace_format_value(val, sizeof(val), TRACE_ARG_HEX, a->value);
			trace_json_string(val, out);
		}
	}
	fputs("}", out);
}

/* Why the arguments shown as null were not read: ,"unread":{"x":"..."}. */
static void print_json_unread(const struct trace_record *r, FILE *out)
{
	int n = 0;

	for (unsigned i = 0; i < r->nargs && i < TRACE_MAX_ARGS; i++) {
		const struct trace_arg *a = &r->args[i];
		if (a->kind != TRACE_ARG_UNKNOWN)
			continue;
		const char *why = trace_arg_why_text(TRACE_ARG_WHY(a->flags));
		char name[sizeof(a->name) + 1];
		trace_copy_str(name, sizeof(name), a->name);
		fputs(n++ ? "," : ",\"unread\":{", out);
		trace_json_string(name, out);
		fputc(':', out);
		trace_json_string(*why ? why : "not in an integer register", out);
	}
	if (n)
		fputc('}', out);
}

void trace_record_print(const struct trace_record *r, enum trace_format f, int first, FILE *out)
{
	if (f == TRACE_FORMAT_TEXT) {
		print_text(r, out);
		return;
	}
	if (f == TRACE_FORMAT_JSON) {
		fprintf(out,
			"{\"time_ns\":%" PRIu64
			",\"pid\":%u,\"tid\":%u,\"event\":\"%s\",\"function\":",
			r->time_ns, (unsigned)r->pid, (unsigned)r->tid,
			r->kind == TRACE_RETURN ? "return" : "call");
		trace_json_string(r->function, out);
		fputs(",\"args\":", out);
		print_json_args(r, out);
		print_json_unread(r, out);
		if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_OPEN)) {
			fprintf(out, ",\"still_running\":true,\"duration_ns\":%" PRIu64,
				r->duration_ns);
		} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_LOST)) {
			fputs(",\"return_lost\":true", out);
		} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_UNWOUND)) {
			fputs(",\"unwound\":true", out);
		} else if (r->kind == TRACE_RETURN && (r->flags & TRACE_RECORD_TAIL)) {
			fprintf(out, ",\"tail_call\":true,\"duration_ns\":%" PRIu64,
				r->duration_ns);
		} else if (r->kind == TRACE_RETURN) {
			if (r->ret_kind == TRACE_ARG_INT)
				fprintf(out, ",\"ret\":%" PRId64, (int64_t)r->ret);
			else if (r->ret_kind == TRACE_ARG_UNKNOWN)
				fputs(",\"ret\":null", out); /* not in rax */
			else if (r->ret_kind == TRACE_ARG_OBJECT)
				print_json_object(r, out);
			else
				fprintf(out, ",\"ret\":%" PRIu64, r->ret);
			fprintf(out, ",\"duration_ns\":%" PRIu64, r->duration_ns);
		}
		if (r->caller[0]) {
			fputs(",\"caller\":", out);
			trace_json_string(r->caller, out);
		}
		fputs("}\n", out);
		return;
	}
	/* Chrome trace event format: durations from matching B/E pairs. */
	fprintf(out, "%s{\"name\":", first ? "" : ",\n");
	trace_json_string(r->function, out);
	fprintf(out, ",\"ph\":\"%s\",\"ts\":%.3f,\"pid\":%u,\"tid\":%u",
		r->kind == TRACE_RETURN ? "E" : "B", (double)r->time_ns / 1e3, (unsigned)r->pid,
		(unsigned)r->tid);
	if (r->kind == TRACE_CALL) {
		fputs(",\"args\":", out);
		print_json_args(r, out);
	} else if (r->flags & TRACE_RECORD_OPEN) {
		fputs(",\"args\":{\"still_running\":true}", out);
	} else if (r->flags & TRACE_RECORD_LOST) {
		fputs(",\"args\":{\"return_lost\":true}", out);
	} else if (r->flags & TRACE_RECORD_UNWOUND) {
		fputs(",\"args\":{\"unwound\":true}", out);
	} else if (r->flags & TRACE_RECORD_TAIL) {
		fputs(",\"args\":{\"tail_call\":true}", out);
	} else if (r->ret_kind == TRACE_ARG_UNKNOWN) {
		fputs(",\"args\":{\"ret\":null}", out); /* not in rax */
	} else {
		fprintf(out, ",\"args\":{\"ret\":%" PRId64 "}", (int64_t)r->ret);
	}
	fputs("}", out);
}
