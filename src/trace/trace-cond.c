/*
 * The --if condition language (see trace-cond.h): a recursive-descent
 * parser into a fixed array of nodes, and an evaluator that walks it. The
 * depth of the recursion is bounded (parentheses; a run of '!' is a loop)
 * and so are the text and the nodes, so a hostile condition cannot
 * exhaust the stack or memory.
 */
#include "trace/trace-cond.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum node_kind { N_INT, N_STR, N_NAME, N_NOT, N_AND, N_OR, N_EQ, N_NE, N_LT, N_LE, N_GT, N_GE };

struct node {
	enum node_kind kind;
	int left, right; /* node indexes, -1 if none */
	int64_t i;
	char *s; /* N_STR, N_NAME */
};

struct trace_cond {
	struct node nodes[TRACE_COND_MAX_NODES];
	int n, root;
};

struct parser {
	const char *text, *p;
	struct trace_cond *c;
	struct trace_cond_error *err;
	int failed;
	int depth; /* of parentheses, bounded so the recursion is */
};

static int fail(struct parser *ps, const char *at, const char *message)
{
	if (!ps->failed) {
		ps->failed = 1;
		ps->err->column = (int)(at - ps->text) + 1;
		ps->err->message = message;
	}
	return -1;
}

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int new_node(struct parser *ps, enum node_kind kind, int left, int right)
{
	if (ps->c->n >= TRACE_COND_MAX_NODES)
		return fail(ps, ps->p, "condition too long");
	struct node *n = &ps->c->nodes[ps->c->n];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->left = left;
	n->right = right;
	return ps->c->n++;
}

static int parse_or(struct parser *ps);

static int parse_string(struct parser *ps)
{
	const char *start = ps->p++;
	size_t len = 0;
	char *s = malloc(strlen(start) + 1);

	if (!s)
		return fail(ps, start, "out of memory");
	while (*ps->p && *ps->p != '"') {
		if (*ps->p == '\\') {
			ps->p++;
			if (*ps->p != '"' && *ps->p != '\\') {
				free(s);
				return fail(ps, ps->p,
					    "unknown escape in string (only \\\" and \\\\)");
			}
		}
		s[len++] = *ps->p++;
	}
	if (*ps->p != '"') {
		free(s);
		return fail(ps, start, "unterminated string");
	}
	ps->p++;
	s[len] = 0;
	int n = new_node(ps, N_STR, -1, -1);
	if (n < 0) {
		free(s);
		return -1;
	}
	ps->c->nodes[n].s = s;
	return n;
}

static int parse_operand(struct parser *ps)
{
	skip_space(ps);
	const char *start = ps->p;
	if (*ps->p == '(') {
		if (++ps->depth > 32)
			return fail(ps, ps->p, "parentheses nested too deep");
		ps->p++;
		int n = parse_or(ps);
		ps->depth--;
		if (n < 0)
			return -1;
		skip_space(ps);
		if (*ps->p != ')')
			return fail(ps, ps->p, "expected ')'");
		ps->p++;
		return n;
	}
	if (*ps->p == '"')
		return parse_string(ps);
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '-' && isdigit((unsigned char)ps->p[1]))) {
		char *end;
		errno = 0;
		long long v = strtoll(ps->p, &end, 0);
		if (errno == ERANGE) {
			/* Large unsigned values (addresses) are kept bit for bit. */
			errno = 0;
			v = (long long)strtoull(ps->p, &end, 0);
			if (errno || *ps->p == '-')
				return fail(ps, start, "integer out of range");
		}
		if (isalnum((unsigned char)*end) || *end == '_')
			return fail(ps, end, "bad integer");
		ps->p = end;
		int n = new_node(ps, N_INT, -1, -1);
		if (n >= 0)
			ps->c->nodes[n].i = v;
		return n;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		size_t len = (size_t)(ps->p - start);
		char *s = malloc(len + 1);
		if (!s)
			return fail(ps, start, "out of memory");
		memcpy(s, start, len);
		s[len] = 0;
		int n = new_node(ps, N_NAME, -1, -1);
		if (n < 0) {
			free(s);
			return -1;
		}
		ps->c->nodes[n].s = s;
		return n;
	}
	if (!*ps->p)
		return fail(ps, ps->p, "expected a name, number or string at the end");
	return fail(ps, ps->p, "expected a name, number or string");
}

static int parse_compare(struct parser *ps)
{
	static const struct {
		const char *op;
		enum node_kind kind;
	} ops[] = {{"==", N_EQ}, {"!=", N_NE}, {"<=", N_LE},
		   {">=", N_GE}, {"<", N_LT},  {">", N_GT}};
	int left = parse_operand(ps);

	if (left < 0)
		return -1;
	skip_space(ps);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t len = strlen(ops[i].op);
		if (strncmp(ps->p, ops[i].op, len) != 0)
			continue;
		ps->p += len;
		int right = parse_operand(ps);
		if (right < 0)
			return -1;
		return new_node(ps, ops[i].kind, left, right);
	}
	if (*ps->p == '=')
		return fail(ps, ps->p, "'=' is not an operator: use '=='");
	return left;
}

/* A run of '!' is counted, not recursed into: each one costs a node, so
 * a hostile run ends at TRACE_COND_MAX_NODES, never in a deep stack. */
static int parse_unary(struct parser *ps)
{
	size_t nots = 0;

	skip_space(ps);
	while (*ps->p == '!' && ps->p[1] != '=') {
		ps->p++;
		if (++nots >= TRACE_COND_MAX_NODES)
			return fail(ps, ps->p, "condition too long");
		skip_space(ps);
	}
	int n = parse_compare(ps);
	while (n >= 0 && nots--)
		n = new_node(ps, N_NOT, n, -1);
	return n;
}

static int parse_and(struct parser *ps)
{
	int left = parse_unary(ps);

	while (left >= 0) {
		skip_space(ps);
		if (strncmp(ps->p, "&&", 2) != 0)
			break;
		ps->p += 2;
		int right = parse_unary(ps);
		if (right < 0)
			return -1;
		left = new_node(ps, N_AND, left, right);
	}
	return left;
}

static int parse_or(struct parser *ps)
{
	int left = parse_and(ps);

	while (left >= 0) {
		skip_space(ps);
		if (strncmp(ps->p, "||", 2) != 0)
			break;
		ps->p += 2;
		int right = parse_and(ps);
		if (right < 0)
			return -1;
		left = new_node(ps, N_OR, left, right);
	}
	return left;
}

void trace_cond_free(struct trace_cond *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		free(c->nodes[i].s);
	free(c);
}

int trace_cond_parse(const char *text, struct trace_cond **out, struct trace_cond_error *err)
{
	struct trace_cond *c = calloc(1, sizeof(*c));
	struct parser ps = {text, text, c, err, 0, 0};

	if (!c)
		return -ENOMEM;
	if (strlen(text) > TRACE_COND_MAX_TEXT) {
		fail(&ps, text + TRACE_COND_MAX_TEXT, "condition longer than 4096 characters");
		trace_cond_free(c);
		return -EINVAL;
	}
	c->root = parse_or(&ps);
	if (c->root >= 0) {
		skip_space(&ps);
		if (*ps.p == '&' || *ps.p == '|')
			fail(&ps, ps.p, "'&' and '|' are written '&&' and '||'");
		else if (*ps.p)
			fail(&ps, ps.p, "unexpected text after the condition");
	}
	if (ps.failed || c->root < 0) {
		trace_cond_free(c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

static int value_of(const struct trace_cond *c, int n, trace_cond_lookup_fn lookup, void *ctx,
		    struct trace_value *v);

static int truth(const struct trace_cond *c, int n, trace_cond_lookup_fn lookup, void *ctx)
{
	const struct node *x = &c->nodes[n];
	struct trace_value a, b;

	switch (x->kind) {
	case N_NOT:
		return !truth(c, x->left, lookup, ctx);
	case N_AND:
		return truth(c, x->left, lookup, ctx) && truth(c, x->right, lookup, ctx);
	case N_OR:
		return truth(c, x->left, lookup, ctx) || truth(c, x->right, lookup, ctx);
	case N_INT:
	case N_STR:
	case N_NAME:
		if (value_of(c, n, lookup, ctx, &a) < 0)
			return 0;
		return a.is_str ? a.s[0] != 0 : a.i != 0;
	default:
		break;
	}
	if (value_of(c, x->left, lookup, ctx, &a) < 0 ||
	    value_of(c, x->right, lookup, ctx, &b) < 0 || a.is_str != b.is_str)
		return 0;
	int cmp = a.is_str ? strcmp(a.s, b.s) : (a.i > b.i) - (a.i < b.i);
	switch (x->kind) {
	case N_EQ:
		return cmp == 0;
	case N_NE:
		return cmp != 0;
	case N_LT:
		return cmp < 0;
	case N_LE:
		return cmp <= 0;
	case N_GT:
		return cmp > 0;
	case N_GE:
		return cmp >= 0;
	default:
		return 0;
	}
}

static int value_of(const struct trace_cond *c, int n, trace_cond_lookup_fn lookup, void *ctx,
		    struct trace_value *v)
{
	const struct node *x = &c->nodes[n];

	switch (x->kind) {
	case N_INT:
		*v = (struct trace_value){0, x->i, NULL};
		return 0;
	case N_STR:
		*v = (struct trace_value){1, 0, x->s};
		return 0;
	case N_NAME:
		if (lookup(x->s, v, ctx) < 0 || (v->is_str && !v->s))
			return -ENOENT;
		return 0;
	default:
		/* A comparison used as an operand: (a < b) == 1. */
		*v = (struct trace_value){0, truth(c, n, lookup, ctx), NULL};
		return 0;
	}
}

int trace_cond_eval(const struct trace_cond *c, trace_cond_lookup_fn lookup, void *ctx)
{
	return c ? truth(c, c->root, lookup, ctx) : 1;
}

int trace_cond_foreach_name(const struct trace_cond *c, int (*fn)(const char *name, void *ctx),
			    void *ctx)
{
	for (int i = 0; c && i < c->n; i++) {
		if (c->nodes[i].kind != N_NAME)
			continue;
		int rc = fn(c->nodes[i].s, ctx);
		if (rc)
			return rc;
	}
	return 0;
}
