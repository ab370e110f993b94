/*
 * Packing and unpacking trace records (see trace-pack.h). A record is, in
 * order: its kind and argument count (a byte), its return kind (a byte);
 * its flags;
 * its time, process and thread as zig-zag differences from the record
 * before; its duration and return value; its arity (zig-zag); its function
 * and caller as names; a byte whose bit i says register i changed, then
 * each changed register XORed with its value before; each argument's
 * name, kind and flags (the flags shifted left of the kind's four bits),
 * value (XORed with its register) and text; and the
 * return's text. A name is its number, followed by its length and bytes
 * when that number is the next one (its first use); a text is its length
 * and bytes.
 */
#include "trace/trace-pack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/hash.h"
#include "util/varint.h"

_Static_assert(3 + 5 * VARINT_MAX + (2 + 2 * TRACE_MAX_ARGS) * (VARINT_MAX + 2) + 1 +
		       TRACE_MAX_ARGS * (3 * VARINT_MAX) +
		       sizeof(((struct trace_record *)0)->function) +
		       sizeof(((struct trace_record *)0)->caller) +
		       sizeof(((struct trace_record *)0)->ret_text) +
		       TRACE_MAX_ARGS * (sizeof(((struct trace_arg *)0)->name) +
					 sizeof(((struct trace_arg *)0)->str)) <=
		   TRACE_PACK_MAX,
	       "TRACE_PACK_MAX holds the longest record");

void trace_pack_init(struct trace_pack *p)
{
	memset(p, 0, sizeof(*p));
	htab_init(&p->ids);
}

void trace_pack_release(struct trace_pack *p)
{
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	htab_release(&p->ids);
	memset(p, 0, sizeof(*p));
}

struct name_key {
	const struct trace_pack *p;
	const char *s;
};

static int same_name(const void *ctx, uint64_t val)
{
	const struct name_key *k = ctx;

	return strcmp(k->p->names[val - 1], k->s) == 0;
}

/* Adds a copy of the len bytes at s as the next name; its number, or 0
 * when out of memory. */
static uint64_t add_name(struct trace_pack *p, const char *s, size_t len)
{
	char **v = array_reserve(p->names, &p->cap, p->nnames + 1, sizeof(*p->names));
	if (!v)
		return 0;
	p->names = v;
	char *copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = 0;
	p->names[p->nnames++] = copy;
	return p->nnames;
}

/* Writes a name: its number, and its bytes on its first use. */
static int put_name(struct trace_pack *p, const char *s, uint8_t **at)
{
	if (!*s) {
		*(*at)++ = 0;
		return 0;
	}
	struct name_key k = {p, s};
	uint64_t h = hash_fnv1a_str(HASH_FNV1A_INIT, s);
	struct htab_slot *slot = htab_find(&p->ids, h, same_name, &k);
	if (slot) {
		*at += varint_put(*at, slot->val);
		return 0;
	}
	size_t len = strlen(s);
	uint64_t id = add_name(p, s, len);
	if (!id || !htab_add(&p->ids, h, id))
		return -ENOMEM;
	*at += varint_put(*at, id);
	if (p->alone)
		return 0; /* the pack keeps it for the reader */
	*at += varint_put(*at, len);
	memcpy(*at, s, len);
	*at += len;
	return 0;
}

static void put_text(const char *s, uint8_t **at)
{
	size_t len = strlen(s);

	*at += varint_put(*at, len);
	memcpy(*at, s, len);
	*at += len;
}

static void put(uint64_t v, uint8_t **at)
{
	*at += varint_put(*at, v);
}

int trace_pack_put(struct trace_pack *p, const struct trace_record *r, uint8_t *out)
{
	uint8_t *at = out;
	unsigned nargs = r->nargs <= TRACE_MAX_ARGS ? r->nargs : TRACE_MAX_ARGS;

	*at++ = (uint8_t)(r->kind | nargs << 2);
	*at++ = r->ret_kind;
	put(r->flags, &at);
	put(zigzag((int64_t)(r->time_ns - p->time_ns)), &at);
	put(zigzag((int64_t)r->pid - (int64_t)p->pid), &at);
	put(zigzag((int64_t)r->tid - (int64_t)p->tid), &at);
	p->time_ns = r->time_ns;
	p->pid = r->pid;
	p->tid = r->tid;
	put(r->duration_ns, &at);
	put(r->ret, &at);
	put(zigzag(r->arity), &at);
	if (put_name(p, r->function, &at) || put_name(p, r->caller, &at))
		return -ENOMEM;
	uint8_t *mask = at++;
	*mask = 0;
	for (int i = 0; i < TRACE_MAX_ARGS; i++) {
		if (r->regs[i] == p->regs[i])
			continue;
		*mask |= (uint8_t)(1u << i);
		put(r->regs[i] ^ p->regs[i], &at);
		p->regs[i] = r->regs[i];
	}
	for (unsigned i = 0; i < nargs; i++) {
		const struct trace_arg *a = &r->args[i];
		if (put_name(p, a->name, &at))
			return -ENOMEM;
		put((a->kind & 15) | (uint64_t)a->flags << 4, &at); /* kinds < 16 */
		put(a->value ^ r->regs[i], &at);
		put_text(a->str, &at);
	}
	put_text(r->ret_text, &at);
	return (int)(at - out);
}

/* Reads a varint no greater than max. */
static int get(const uint8_t **at, const uint8_t *end, uint64_t max, uint64_t *v)
{
	return varint_read(at, end, v) || *v > max ? -EBADMSG : 0;
}

/* Reads a text into a field of cap bytes, NUL-terminated. */
static int get_text(const uint8_t **at, const uint8_t *end, char *dst, size_t cap)
{
	uint64_t len;

	if (get(at, end, cap - 1, &len) || len > (uint64_t)(end - *at) ||
	    memchr(*at, 0, (size_t)len))
		return -EBADMSG;
	memcpy(dst, *at, (size_t)len);
	dst[len] = 0;
	*at += len;
	return 0;
}

/* Reads a name into a field of cap bytes: a known one, or the next one
 * defined here. */
static int get_name(struct trace_pack *p, const uint8_t **at, const uint8_t *end, char *dst,
		    size_t cap)
{
	uint64_t id;

	if (get(at, end, p->nnames + !p->alone, &id))
		return -EBADMSG;
	if (id == 0) {
		*dst = 0;
		return 0;
	}
	if (id <= p->nnames) {
		size_t len = strlen(p->names[id - 1]);
		if (len >= cap)
			return -EBADMSG; /* defined for a longer field */
		memcpy(dst, p->names[id - 1], len + 1);
		return 0;
	}
	if (get_text(at, end, dst, cap) || !*dst)
		return -EBADMSG;
	return add_name(p, dst, strlen(dst)) ? 0 : -ENOMEM;
}

int trace_pack_get(struct trace_pack *p, const uint8_t **at, const uint8_t *end,
		   struct trace_record *r)
{
	uint64_t v, dpid, dtid, arity;

	memset(r, 0, sizeof(*r));
	if (end - *at < 2)
		return -EBADMSG;
	r->kind = (*at)[0] & 3;
	r->nargs = (*at)[0] >> 2;
	r->ret_kind = (*at)[1];
	*at += 2;
	if ((r->kind != TRACE_CALL && r->kind != TRACE_RETURN) || r->nargs > TRACE_MAX_ARGS)
		return -EBADMSG;
	if (get(at, end, UINT32_MAX, &v))
		return -EBADMSG;
	r->flags = (uint32_t)v;
	if (get(at, end, UINT64_MAX, &v) || get(at, end, UINT64_MAX, &dpid) ||
	    get(at, end, UINT64_MAX, &dtid))
		return -EBADMSG;
	r->time_ns = p->time_ns + (uint64_t)unzigzag(v);
	r->pid = (uint32_t)(p->pid + (uint64_t)unzigzag(dpid)); /* wraps, never overflows */
	r->tid = (uint32_t)(p->tid + (uint64_t)unzigzag(dtid));
	p->time_ns = r->time_ns;
	p->pid = r->pid;
	p->tid = r->tid;
	if (get(at, end, UINT64_MAX, &r->duration_ns) || get(at, end, UINT64_MAX, &r->ret) ||
	    get(at, end, UINT64_MAX, &arity) || unzigzag(arity) < INT32_MIN ||
	    unzigzag(arity) > INT32_MAX)
		return -EBADMSG;
	r->arity = (int32_t)unzigzag(arity);
	int err = get_name(p, at, end, r->function, sizeof(r->function));
	if (!err)
		err = get_name(p, at, end, r->caller, sizeof(r->caller));
	if (err)
		return err;
	if (*at == end)
		return -EBADMSG;
	uint8_t mask = *(*at)++;
	if (mask >> TRACE_MAX_ARGS)
		return -EBADMSG;
	for (int i = 0; i < TRACE_MAX_ARGS; i++) {
		if ((mask & (1u << i)) && get(at, end, UINT64_MAX, &v))
			return -EBADMSG;
		if (mask & (1u << i))
			p->regs[i] ^= v;
		r->regs[i] = p->regs[i];
	}
	for (unsigned i = 0; i < r->nargs; i++) {
		struct trace_arg *a = &r->args[i];
		err = get_name(p, at, end, a->name, sizeof(a->name));
		if (err)
			return err;
		if (get(at, end, (uint64_t)UINT32_MAX << 4 | 15, &v))
			return -EBADMSG;
		a->kind = (uint32_t)(v & 15);
		a->flags = (uint32_t)(v >> 4);
		if (get(at, end, UINT64_MAX, &v) || get_text(at, end, a->str, sizeof(a->str)))
			return -EBADMSG;
		a->value = v ^ r->regs[i];
	}
	return get_text(at, end, r->ret_text, sizeof(r->ret_text));
}

/* Forgets the record before, so that the next is packed from zero. */
static void alone(struct trace_pack *p, int on)
{
	p->alone = on;
	p->time_ns = 0;
	p->pid = p->tid = 0;
	memset(p->regs, 0, sizeof(p->regs));
}

int trace_pack_put_alone(struct trace_pack *p, const struct trace_record *r, uint8_t *out)
{
	alone(p, 1);
	int n = trace_pack_put(p, r, out);
	alone(p, 0);
	return n;
}

int trace_pack_get_alone(struct trace_pack *p, const uint8_t *at, const uint8_t *end,
			 struct trace_record *r)
{
	alone(p, 1);
	int err = trace_pack_get(p, &at, end, r);
	alone(p, 0);
	return err;
}
