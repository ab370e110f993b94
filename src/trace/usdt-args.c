/*
 * USDT probe arguments (see usdt-args.h).
 */
#include "trace/usdt-args.h"

#include <stdio.h>
#include <string.h>

#include "symbols/usdt.h"
#include "trace/arg-place.h"
#include "util/x86-regs.h"

/* How an argument of a and its size is shown. */
static uint32_t kind_of(const struct usdt_arg *a)
{
	if (a->is_signed)
		return TRACE_ARG_INT;
	return a->size == 8 ? TRACE_ARG_HEX : TRACE_ARG_UINT;
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

void usdt_args_sig(const struct usdt_probe *u, struct trace_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	sig->known = 1;
	sig->arity = u->nargs;
	sig->nparams = u->nargs < TRACE_MAX_ARGS ? u->nargs : TRACE_MAX_ARGS;
	for (int i = 0; i < sig->nparams; i++) {
		snprintf(sig->params[i].name, sizeof(sig->params[i].name), "arg%d", i);
		sig->params[i].kind = kind_of(&u->args[i]);
		sig->params[i].size = u->args[i].size;
		sig->params[i].reg = u->args[i].kind == USDT_ARG_REG ? u->args[i].reg : -1;
		sig->params[i].len_reg = -1;
	}
	sig->ret_kind = TRACE_ARG_NONE;
}

int usdt_args_captured(const struct usdt_probe *u)
{
	for (int i = 0; i < u->nargs && i < TRACE_MAX_ARGS; i++)
		if (u->args[i].kind == USDT_ARG_MEM)
			return i;
	return -1;
}

void usdt_args_fill(const struct usdt_probe *u, const uint64_t *gpr, uint32_t have,
		    const uint8_t *obj, size_t len, struct trace_record *r)
{
	int captured = usdt_args_captured(u);

	for (int i = 0; i < TRACE_MAX_ARGS; i++)
		r->regs[i] = gpr[arg_sysv_regs[i]];
	r->arity = u->nargs;
	r->ret_kind = TRACE_ARG_NONE;
	r->nargs = (uint8_t)(u->nargs < TRACE_MAX_ARGS ? u->nargs : TRACE_MAX_ARGS);
	for (int i = 0; i < r->nargs; i++) {
		const struct usdt_arg *a = &u->args[i];
		struct trace_arg *out = &r->args[i];
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "arg%d", i);
		out->kind = kind_of(a);
		switch (a->kind) {
		case USDT_ARG_CONST:
			out->value = narrow((uint64_t)a->value, a);
			break;
		case USDT_ARG_REG:
			if (have >> a->reg & 1) {
				out->value = narrow(gpr[a->reg], a);
				break;
			}
			out->kind = TRACE_ARG_UNKNOWN;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_UNSEEN);
			break;
		case USDT_ARG_MEM:
			if (i == captured && obj && len >= a->size) {
				uint64_t v = 0;
				memcpy(&v, obj, a->size);
				out->value = narrow(v, a);
				break;
			}
			out->kind = TRACE_ARG_UNKNOWN;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_MEMORY);
			break;
		default:
			out->kind = TRACE_ARG_UNKNOWN;
			out->flags = TRACE_ARG_WHY_SET(TRACE_WHY_OPERAND);
			break;
		}
	}
}
