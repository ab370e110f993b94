/*
 * Python calls through CPython's USDT probes (see py-call.h).
 */
#include "trace/py-call.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/usdt.h"
#include "trace/trace-args.h"
#include "util/array.h"
#include "util/x86-regs.h"

/* Argument i of u at the hit, when it is in a register: 0 and *v. */
static int reg_arg(const struct usdt_probe *u, int i, const uint64_t *gpr, uint64_t *v)
{
	if (i >= u->nargs || u->args[i].kind != USDT_ARG_REG || u->args[i].reg >= X86_NGPR)
		return -1;
	*v = gpr[u->args[i].reg];
	if (u->args[i].size < 8)
		*v &= (1ULL << (u->args[i].size * 8)) - 1;
	return 0;
}

uint64_t py_call_key(const struct usdt_probe *u, const uint64_t *gpr)
{
	uint64_t v;

	return reg_arg(u, 1, gpr, &v) == 0 ? v : 0;
}

void py_call_module(const char *file, char *buf, size_t cap)
{
	const char *base = strrchr(file, '/');
	const char *start = base ? base + 1 : file;
	size_t len = strlen(start);

	if (strcmp(start, "__init__.py") == 0 && base) {
		const char *dir = base;
		while (dir > file && dir[-1] != '/')
			dir--;
		start = dir;
		len = (size_t)(base - dir);
	} else if (len > 3 && strcmp(start + len - 3, ".py") == 0) {
		len -= 3;
	}
	snprintf(buf, cap, "%.*s", (int)len, start);
}

/* Whether a py: pattern of pats names function of module, or the call
 * named qualified (module.qualname, or NULL). */
static int named(const struct trace_pattern *pats, size_t npat, const char *module,
		 const char *function, const char *qualified)
{
	char full[256];

	snprintf(full, sizeof(full), "%s.%s", module, function);
	for (size_t p = 0; p < npat; p++) {
		if (pats[p].kind != TRACE_PATTERN_PY)
			continue;
		const char *name = strchr(pats[p].function, '.') ? full : function;
		if (fnmatch(pats[p].function, name, 0) == 0 ||
		    (qualified && name == full && fnmatch(pats[p].function, qualified, 0) == 0))
			return 1;
	}
	return 0;
}

int py_call_wants_qualified(const struct trace_pattern *pats, size_t npat)
{
	for (size_t p = 0; p < npat; p++) {
		const char *g = pats[p].function, *dot = strchr(g, '.');
		if (pats[p].kind == TRACE_PATTERN_PY && dot &&
		    (strchr(dot + 1, '.') || strncmp(g, "__main__.", 9) == 0))
			return 1;
	}
	return 0;
}

int py_call_registers(const struct usdt_probe *u, int *name_reg, int *file_reg)
{
	if (u->nargs < 2 || u->args[0].kind != USDT_ARG_REG || u->args[1].kind != USDT_ARG_REG)
		return -1;
	*file_reg = u->args[0].reg;
	*name_reg = u->args[1].reg;
	return 0;
}

/* One of the call's strings into buf (cap bytes): as copied at the hit
 * when whole, else read from pid at addr. Returns 0, 1 when cut (by the
 * copy or by cap), -1 when neither has it. */
static int call_string(const char *copy, size_t copy_len, pid_t pid, int have_addr, uint64_t addr,
		       char *buf, size_t cap)
{
	if (copy && copy_len < PY_CALL_CAPTURED) {
		snprintf(buf, cap, "%s", copy);
		return copy_len >= cap;
	}
	int rc = have_addr ? trace_read_string(pid, addr, buf, cap) : -1;
	if (rc >= 0)
		return rc;
	if (!copy)
		return -1;
	snprintf(buf, cap, "%s", copy); /* the process is gone: what was copied */
	return 1;
}

int py_call_fill(const struct usdt_probe *u, const uint64_t *gpr, const struct py_call_strings *s,
		 pid_t pid, const struct trace_pattern *pats, size_t npat, struct trace_record *r)
{
	uint64_t file_at = 0, name_at = 0, line = 0;
	char file[256], name[128], module[128];
	int file_reg = reg_arg(u, 0, gpr, &file_at) == 0;
	int name_reg = reg_arg(u, 1, gpr, &name_at) == 0;
	int file_rc = call_string(s->file, s->file_len, pid, file_reg, file_at, file, sizeof(file));
	int name_rc = call_string(s->name, s->name_len, pid, name_reg, name_at, name, sizeof(name));
	/* A cut name names no function: it is shown, never matched. */
	int have_file = file_rc >= 0, have_name = name_rc >= 0;
	int have_line = reg_arg(u, 2, gpr, &line) == 0;

	if (!have_file)
		snprintf(file, sizeof(file), "?");
	py_call_module(file, module, sizeof(module));
	char full[sizeof(module) + sizeof(name) + 4];
	if (s->qualified)
		snprintf(full, sizeof(full), "py:%s", s->qualified);
	else
		snprintf(full, sizeof(full), "py:%s.%s", have_file ? module : "?",
			 have_name ? name : "?");
	trace_copy_str(r->function, sizeof(r->function), full);
	r->arity = -1; /* its parameters are not known */
	r->ret_kind = TRACE_ARG_NONE;
	r->nargs = 2;
	struct trace_arg *a = &r->args[0];
	memset(a, 0, 2 * sizeof(*a));
	snprintf(a[0].name, sizeof(a[0].name), "file");
	a[0].kind = TRACE_ARG_STR;
	a[0].value = file_at;
	if (!have_file)
		a[0].flags = TRACE_STR_UNREADABLE;
	else if (file_rc > 0 || strlen(file) >= sizeof(a[0].str))
		a[0].flags = TRACE_STR_TRUNCATED;
	trace_copy_str(a[0].str, sizeof(a[0].str), file);
	snprintf(a[1].name, sizeof(a[1].name), "line");
	a[1].kind = have_line ? TRACE_ARG_INT : TRACE_ARG_UNKNOWN;
	a[1].value = (uint64_t)(int64_t)(int32_t)line;
	if (!have_line)
		a[1].flags = TRACE_ARG_WHY_SET(TRACE_WHY_OPERAND);
	if (file_rc < 0 || name_rc < 0)
		return -1;
	return file_rc == 0 && name_rc == 0 && named(pats, npat, module, name, s->qualified);
}

struct py_hist {
	char name[96];
	struct trace_hist h;
};

int py_hists_add(struct py_hists *h, const char *name, uint64_t ns)
{
	size_t i = 0;

	while (i < h->n && strcmp(h->v[i].name, name) != 0)
		i++;
	if (i == h->n) {
		if (h->n >= PY_HISTS) {
			h->dropped++;
			return 0;
		}
		struct py_hist *v = array_reserve(h->v, &h->cap, h->n + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		trace_copy_str(v[i].name, sizeof(v[i].name), name);
		trace_hist_init(&v[i].h);
		h->n++;
	}
	trace_hist_add(&h->v[i].h, ns);
	return 0;
}

struct trace_hist *py_hists_get(struct py_hists *h, size_t i, const char **name)
{
	if (i >= h->n)
		return NULL;
	*name = h->v[i].name;
	return &h->v[i].h;
}

void py_hists_release(struct py_hists *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}
