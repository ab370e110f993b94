/*
 * USDT probe arguments (see usdt-args.h).
 */
#include "trace/usdt-args.h"

#include <stdio.h>
#include <string.h>

#include "symbols/usdt.h"
#include "trace/arg-place.h"
#include "util/x86-regs.h"

/* The type spec gives argument i, or TRACE_USDT_AS_NOTE. */
static int type_of(const struct trace_usdt_spec *spec, int i)
{
	return spec && i < spec->n ? spec->a[i].type : TRACE_USDT_AS_NOTE;
}

/* How argument i of a is shown. */
static uint32_t kind_of(const struct usdt_arg *a, const struct trace_usdt_spec *spec, int i)
{
	switch (type_of(spec, i)) {
	case TRACE_USDT_STR:
		return TRACE_ARG_STR;
	case TRACE_USDT_INT:
		return TRACE_ARG_INT;
	case TRACE_USDT_UINT:
		return TRACE_ARG_UINT;
	case TRACE_USDT_HEX:
		return TRACE_ARG_HEX;
	default:
		if (a->is_signed)
			return TRACE_ARG_INT;
		return a->size == 8 ? TRACE_ARG_HEX : TRACE_ARG_UINT;
	}
}

/* Its name: the spec's, else argN. */
static void name_of(const struct trace_usdt_spec *spec, int i, char *buf, size_t cap)
{
	if (spec && i < spec->n && spec->a[i].name[0])
		snprintf(buf, cap, "%s", spec->a[i].name);
	else
		snprintf(buf, cap, "arg%d", i);
}

/* v cut to size bytes, sign-extended when signed. */
static uint64_t narrow(uint64_t v, const struct usdt_arg *a)
{
	if (a->size >= 8)
		return v;
	uint64_t mask = (1ULL << (a->size * 8)) - 1;
	v &= mask;
	if (a->is_signed && (v >> (a->size * 8 - 1)) & 1)
		v |= ~mask;
	return v;
}

void usdt_args_sig(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		   struct trace_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	sig->known = 1;
	sig->arity = u->nargs;
	sig->nparams = u->nargs < TRACE_MAX_ARGS ? u->nargs : TRACE_MAX_ARGS;
	for (int i = 0; i < sig->nparams; i++) {
		name_of(spec, i, sig->params[i].name, sizeof(sig->params[i].name));
		sig->params[i].kind = kind_of(&u->args[i], spec, i);
		sig->params[i].size = u->args[i].size;
		sig->params[i].reg = u->args[i].kind == USDT_ARG_REG ? u->args[i].reg : -1;
		sig->params[i].len_reg = -1;
	}
	sig->ret_kind = TRACE_ARG_NONE;
}

void usdt_args_copy(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		    struct usdt_copy *c)
{
	int n = 0;

	c->str[0] = c->str[1] = c->mem = -1;
	for (int i = 0; i < u->nargs && i < TRACE_MAX_ARGS; i++) {
		if (type_of(spec, i) == TRACE_USDT_STR && u->args[i].kind == USDT_ARG_REG && n < 2)
			c->str[n++] = i;
		else if (u->args[i].kind == USDT_ARG_MEM && c->mem < 0)
			c->mem = i;
	}
	if (n)
		c->mem = -1; /* one copy a probe: the strings */
}

/* A string argument, a pointer v: as copied, else read from pid. */
static void fill_string(struct trace_arg *out, const char *copy, pid_t pid, uint64_t v)
{
	int rc;

	if (copy) {
		trace_copy_str(out->str, sizeof(out->str), copy);
		rc = strlen(copy) >= sizeof(out->str);
	} else {
		rc = trace_read_string(pid, v, out->str, sizeof(out->str));
	}
	if (rc < 0)
		out->flags |= TRACE_STR_UNREADABLE;
	else if (rc > 0)
		out->flags |= TRACE_STR_TRUNCATED;
}

void usdt_args_fill(const struct usdt_probe *u, const struct trace_usdt_spec *spec,
		    const struct usdt_copy *plan, const struct usdt_copied *got,
		    const uint64_t *gpr, uint32_t have, pid_t pid, struct trace_record *r)
{
	for (int i = 0; i < TRACE_MAX_ARGS; i++)
		r->regs[i] = gpr[arg_sysv_regs[i]];
	r->arity = u->nargs;
	r->ret_kind = TRACE_ARG_NONE;
	r->nargs = (uint8_t)(u->nargs < TRACE_MAX_ARGS ? u->nargs : TRACE_MAX_ARGS);
	for (int i = 0; i < r->nargs; i++) {
		const struct usdt_arg *a = &u->args[i];
		struct trace_arg *out = &r->args[i];
		memset(out, 0, sizeof(*out));
		name_of(spec, i, out->name, sizeof(out->name));
		out->kind = kind_of(a, spec, i);
		int known = 1;
		switch (a->kind) {
		case USDT_ARG_CONST:
			out->value = narrow((uint64_t)a->value, a);
			break;
		case USDT_ARG_REG:
			if (have >> a->reg & 1) {
				out->value = narrow(gpr[a->reg], a);
				break;
			}
			known = 0;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_UNSEEN);
			break;
		case USDT_ARG_MEM:
			if (i == plan->mem && got->obj && got->len >= a->size) {
				uint64_t v = 0;
				memcpy(&v, got->obj, a->size);
				out->value = narrow(v, a);
				break;
			}
			known = 0;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_MEMORY);
			break;
		default:
			known = 0;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_OPERAND);
			break;
		}
		if (!known) {
			out->kind = TRACE_ARG_UNKNOWN;
			continue;
		}
		if (out->kind == TRACE_ARG_STR)
			fill_string(out,
				    i == plan->str[0]	? got->str[0]
				    : i == plan->str[1] ? got->str[1]
							: NULL,
				    pid, out->value);
	}
}
