/*
 * Hot patching (see patch.h).
 */
#include "patch/patch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject/near-page.h"
#include "inject/target-lock.h"
#include "inject/target-mem.h"
#include "proc/family.h"
#include "patch/patch-thunk.h"
#include "proc/proc-maps.h"
#include "symbols/func-exits.h"
#include "symbols/sym-func.h"
#include "symbols/symbolize.h"
#include "util/array.h"

#define JUMP_LEN      5
#define VENEER_NAME   "recce-patch"
#define CODE_READ_MAX (256u << 10) /* bytes of a function decoded at most */
#define LOCK_WAIT_MS  3000	   /* for another recce to be done with the process */

static void say(struct patch_result *r, const char *text)
{
	snprintf(r->detail, sizeof(r->detail), "%s", text);
}

static int refuse(struct patch_result *r, enum patch_refusal why, int err)
{
	r->refusal = why;
	return err;
}

/* Whether path is an object recce loaded as a replacement: this patch's,
 * or an earlier one's, whose functions are not the ones to replace. */
static int is_replacement(const char *path, const struct patch_cfg *cfg,
			  const struct patch_record *recs, size_t nrecs)
{
	if (strcmp(path, cfg->lib) == 0)
		return 1;
	for (size_t i = 0; i < nrecs; i++)
		if (strcmp(path, recs[i].lib) == 0)
			return 1;
	return 0;
}

/* Finds the one mapped object defining cfg->func: its file, vaddr, size. */
static int find_old(struct symbolizer *sym, struct proc_registry *procs,
		    const struct patch_cfg *cfg, const struct patch_record *recs, size_t nrecs,
		    struct patch_result *r, struct sym_file **file, uint64_t *vaddr)
{
	const struct proc_map *maps;
	size_t n = procs_maps(procs, cfg->pid, &maps), found = 0;

	for (size_t i = 0; i < n; i++) {
		struct sym_file *f = maps[i].file;
		uint64_t v, size;
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			seen |= maps[k].file == f;
		if (!f || seen || is_replacement(maps[i].path, cfg, recs, nrecs) ||
		    symbolizer_find_symbol(sym, f, cfg->func, &v, &size) != 0 || size == 0)
			continue;
		if (found++) {
			size_t used = strlen(r->detail);
			snprintf(r->detail + used, sizeof(r->detail) - used, ", %s",
				 sym_file_path(f));
			continue;
		}
		*file = f;
		*vaddr = v;
		r->size = size;
		say(r, sym_file_path(f));
		snprintf(r->object, sizeof(r->object), "%s", sym_file_path(f));
	}
	if (!found)
		return refuse(r, PATCH_NO_FUNC, -ENOENT);
	if (found > 1)
		return refuse(r, PATCH_AMBIGUOUS, -ENOTUNIQ);
	r->detail[0] = 0;
	return procs_file_addr(procs, cfg->pid, *file, *vaddr, &r->addr);
}

/* The old function's code as the process has it, checked against its
 * file and decoded for jumps into the bytes the patch replaces. */
static int check_code(struct sym_file *f, uint64_t vaddr, const struct patch_cfg *cfg,
		      struct patch_result *r, uint8_t orig[JUMP_LEN])
{
	if (r->size < JUMP_LEN)
		return refuse(r, PATCH_SHORT, -ERANGE);
	size_t len = r->size < CODE_READ_MAX ? r->size : CODE_READ_MAX;
	uint8_t *code = malloc(len);
	uint8_t file[JUMP_LEN];
	uint64_t off;
	if (!code)
		return -ENOMEM;
	int err = tmem_read(cfg->pid, r->addr, code, len);
	if (!err && (sym_file_vaddr_to_offset(f, vaddr, &off) != 0 ||
		     pread(sym_file_fd(f), file, JUMP_LEN, (off_t)off) != JUMP_LEN))
		err = -EIO;
	if (!err && memcmp(code, file, JUMP_LEN) != 0)
		err = refuse(r, PATCH_CODE_CHANGED, -EEXIST);
	size_t at = 0;
	int into =
	    err ? 0 : func_branch_into(code, len, r->addr, r->addr + 1, r->addr + JUMP_LEN, &at);
	if (into == 1) {
		r->branch_at = at;
		err = refuse(r, PATCH_BRANCH_INTO, -EXDEV);
	} else if (into < 0 && len == r->size) {
		err = refuse(r, PATCH_UNDECODABLE, -EILSEQ);
	}
	if (!err)
		memcpy(orig, code, JUMP_LEN);
	free(code);
	return err;
}

/* Compares the DWARF signatures of the old and new functions. */
static int check_signatures(struct sym_file *of, uint64_t ov, struct sym_file *nf, uint64_t nv,
			    const struct patch_cfg *cfg, struct patch_result *r)
{
	int oe = sym_func_signature(of, ov, r->old_sig, sizeof(r->old_sig));
	int ne = sym_func_signature(nf, nv, r->new_sig, sizeof(r->new_sig));
	if (cfg->force)
		return 0;
	if (oe || ne) {
		say(r, oe ? sym_file_path(of) : sym_file_path(nf));
		return refuse(r, PATCH_NO_SIGNATURE, -ENODATA);
	}
	return strcmp(r->old_sig, r->new_sig) ? refuse(r, PATCH_SIGNATURE, -EINVAL) : 0;
}

/* A free slot for the jump to the thunk within 2 GiB of near: in a page
 * recce mapped earlier, or in a new one. */
static int veneer_slot(struct injector *inj, uint64_t near, uint64_t *slot)
{
	struct tmaps m;
	uint8_t page[4096];

	int err = tmaps_read(&m, inj->pid);
	if (err)
		return err;
	for (size_t i = 0; i < m.n; i++) {
		const struct tmap *t = &m.v[i];
		uint64_t dist = t->start > near ? t->start - near : near - t->start;
		if (strcmp(t->path, "[anon:" VENEER_NAME "]") != 0 || dist >= NEAR_PAGE_REACH ||
		    tmem_read(inj->pid, t->start, page, sizeof(page)) != 0)
			continue;
		for (size_t k = 0; k < sizeof(page); k += PATCH_SLOT_LEN) {
			static const uint8_t zero[PATCH_SLOT_LEN];
			if (memcmp(page + k, zero, PATCH_SLOT_LEN) == 0) {
				*slot = t->start + k;
				tmaps_release(&m);
				return 0;
			}
		}
	}
	tmaps_release(&m);
	return near_page_map(inj, near, 4096, VENEER_NAME, slot);
}

static void encode_jump(uint8_t *b, uint64_t from, uint64_t to)
{
	int32_t rel = (int32_t)(int64_t)(to - (from + JUMP_LEN));
	b[0] = 0xe9;
	memcpy(b + 1, &rel, 4);
}

/* The far jump an older recce wrote in a 16-byte slot: jmp [rip + 0];
 * .quad to; two int3. */
static void encode_far_jump(uint8_t *b, uint64_t to)
{
	static const uint8_t far[6] = {0xff, 0x25, 0, 0, 0, 0};

	memcpy(b, far, sizeof(far));
	memcpy(b + 6, &to, 8);
	b[14] = b[15] = 0xcc;
}

/* Loads cfg->lib and finds newfunc there; fills r->new_addr. */
static int load_new(struct injector *inj, struct symbolizer *sym, struct sym_file *nf, uint64_t nv,
		    const struct patch_cfg *cfg, struct patch_result *r)
{
	uint64_t handle = 0;

	int err = injector_dlopen(inj, cfg->lib, &handle, r->detail, sizeof(r->detail));
	r->loader_thread = inj->thread;
	r->load_ns = inj->call_ns;
	r->load_stopped_ns = inj->stopped_ns;
	if (err == -ENOEXEC)
		return refuse(r, PATCH_LOAD, err);
	if (err && inj->refusal != INJECT_OK) {
		r->inject_refusal = inj->refusal;
		return refuse(r, PATCH_INJECT, err);
	}
	if (err)
		return err;
	err = injector_where(sym, cfg->pid, nf, nv, &r->new_addr);
	return err == -ENOENT ? refuse(r, PATCH_NOT_LOADED, err) : err;
}

static int record_has(const struct patch_record *v, size_t n, const char *func)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].func, func) == 0)
			return (int)i;
	return -1;
}

static int write_code(const struct patch_cfg *cfg, pid_t pid, struct patch_result *r,
		      struct code_edit *e, size_t n, const struct code_guard *g, size_t ng)
{
	size_t stale = 0;
	int err = code_write(pid, e, n, g, ng, cfg->timeout_ms, &r->write, &stale);
	if (err == -EBUSY)
		return refuse(r, PATCH_BUSY, err);
	if (err == -ESTALE)
		return refuse(r, PATCH_STALE, err);
	return err;
}

/* Everything after the old function was found and checked, up to the
 * code to write: the object and the thunk loaded, the slot found; the
 * edits (slot first, then the jump) in e[0..*ne), the record filled. */
static int apply_found(const struct patch_cfg *cfg, struct patch_result *r, struct symbolizer *sym,
		       struct sym_file *of, uint64_t ov, struct patch_record *rec,
		       struct code_edit e[2], size_t *ne)
{
	struct sym_file *nf;
	uint64_t nv;
	struct injector inj;

	int err = injector_open(&inj, cfg->pid, sym);
	if (err == -EPROTONOSUPPORT) {
		r->inject_refusal = inj.refusal;
		return refuse(r, PATCH_INJECT, err);
	}
	if (err)
		return err;
	err = symbolizer_open(sym, cfg->lib, -1, &nf);
	if (!err && symbolizer_find_symbol(sym, nf, cfg->newfunc, &nv, NULL) != 0)
		err = refuse(r, PATCH_NEW_MISSING, -ENOENT);
	if (!err)
		err = check_signatures(of, ov, nf, nv, cfg, r);
	if (!err)
		err = load_new(&inj, sym, nf, nv, cfg, r);
	uint64_t thunk = 0;
	if (!err) {
		err = patch_thunk_load(&inj, sym, &thunk, r->detail, sizeof(r->detail));
		if (err == -ENOENT)
			err = refuse(r, PATCH_NO_THUNK, err);
		else if (err == -ENOEXEC)
			err = refuse(r, PATCH_LOAD, err);
		else if (err && inj.refusal != INJECT_OK)
			r->inject_refusal = inj.refusal, err = refuse(r, PATCH_INJECT, err);
	}
	*ne = 0;
	if (!err) {
		err = veneer_slot(&inj, r->addr, &r->veneer);
		if (err && inj.refusal != INJECT_OK) {
			r->inject_refusal = inj.refusal;
			err = refuse(r, PATCH_INJECT, err);
		} else if (err == -ENOSPC || (!err && !near_reaches(r->addr, r->veneer))) {
			err = refuse(r, PATCH_NO_VENEER, -ENOSPC);
		}
		/* Any other error is the call's (the process stopped or gone
		 * meanwhile), said as such. */
	}
	if (!err) {
		struct sym_func_shape shape;
		int known = sym_func_shape(of, ov, &shape) == 0;
		struct code_edit *v = &e[(*ne)++];
		memset(v, 0, sizeof(*v));
		v->addr = r->veneer;
		v->len = PATCH_SLOT_LEN;
		patch_thunk_slot(v->new, r->veneer, thunk, r->new_addr, known ? &shape : NULL,
				 &inj);
	}
	injector_close(&inj);
	if (err)
		return err;
	struct code_edit *j = &e[(*ne)++];
	memset(j, 0, sizeof(*j));
	j->addr = r->addr;
	j->len = JUMP_LEN;
	memcpy(j->old, rec->orig, JUMP_LEN);
	encode_jump(j->new, r->addr, r->veneer);
	rec->addr = r->addr;
	rec->len = JUMP_LEN;
	memcpy(rec->code, j->new, JUMP_LEN);
	rec->veneer = r->veneer;
	rec->new_addr = r->new_addr;
	snprintf(rec->func, sizeof(rec->func), "%s", cfg->func);
	snprintf(rec->lib, sizeof(rec->lib), "%s", cfg->lib);
	snprintf(rec->newfunc, sizeof(rec->newfunc), "%s", cfg->newfunc);
	rec->since = (int64_t)time(NULL);
	rec->uid = getuid();
	return 0;
}

static int apply(const struct patch_cfg *cfg, struct patch_result *r)
{
	struct patch_record *recs = NULL, rec;
	size_t nrecs = 0;
	struct sym_file *of = NULL;
	uint64_t ov = 0;

	memset(r, 0, sizeof(*r));
	memset(&rec, 0, sizeof(rec));
	if (strlen(cfg->func) >= sizeof(rec.func) || strlen(cfg->lib) >= sizeof(rec.lib) ||
	    strlen(cfg->newfunc) >= sizeof(rec.newfunc) || strpbrk(cfg->func, "\t\n") ||
	    strpbrk(cfg->lib, "\t\n") || strpbrk(cfg->newfunc, "\t\n"))
		return -EINVAL;
	int err = patch_registry_load(cfg->dir, cfg->pid, &recs, &nrecs);
	if (err)
		return err == -EBADMSG ? refuse(r, PATCH_REGISTRY, err) : err;
	if (record_has(recs, nrecs, cfg->func) >= 0) {
		free(recs);
		return refuse(r, PATCH_ALREADY, -EALREADY);
	}
	struct symbolizer *sym = symbolizer_new();
	struct proc_registry *procs = sym ? procs_new(sym) : NULL;
	err = procs ? procs_scan(procs, cfg->pid) : -ENOMEM;
	if (!err)
		err = find_old(sym, procs, cfg, recs, nrecs, r, &of, &ov);
	if (!err)
		err = check_code(of, ov, cfg, r, rec.orig);
	procs_free(procs);
	struct code_edit e[2];
	size_t ne = 0;
	if (!err)
		err = apply_found(cfg, r, sym, of, ov, &rec, e, &ne);
	symbolizer_free(sym);
	/* Written down before the code, so that a patch that happened is
	 * always listed and undoable, whenever recce dies. */
	struct patch_record *nv = err ? NULL : realloc(recs, (nrecs + 1) * sizeof(*recs));
	if (!err && !nv)
		err = -ENOMEM;
	if (!err) {
		recs = nv;
		recs[nrecs++] = rec;
		err = patch_registry_save(cfg->dir, cfg->pid, recs, nrecs);
		if (err)
			err = refuse(r, PATCH_REGISTRY, err);
		else if ((err = write_code(cfg, cfg->pid, r, e, ne,
					   &(struct code_guard){r->addr + 1, r->addr + JUMP_LEN},
					   1)) != 0)
			patch_registry_save(cfg->dir, cfg->pid, recs, nrecs - 1);
	}
	free(recs);
	return err;
}

/* Whether pid has p's jump in place. */
static int has_jump(pid_t pid, const struct patch_record *p)
{
	uint8_t now[PATCH_BYTES];

	return tmem_read(pid, p->addr, now, p->len) == 0 && memcmp(now, p->code, p->len) == 0;
}

/* The patch p written out of process pid: the old bytes back in place of
 * the jump (unless it never landed, or someone else put them back), and
 * the slot cleared once no thread is in it or in the part of the thunk
 * that reads it. */
static int undo_in(const struct patch_cfg *cfg, pid_t pid, const struct patch_record *p,
		   struct patch_result *r)
{
	struct code_edit e[2];
	struct code_guard g[3];
	size_t ne = 0, ng = 0;
	uint8_t now[PATCH_BYTES], slot[PATCH_SLOT_LEN];
	static const uint8_t zeros[PATCH_SLOT_LEN];

	memset(e, 0, sizeof(e));
	int err = tmem_read(pid, p->addr, now, p->len);
	if (!err && p->veneer)
		err = tmem_read(pid, p->veneer, slot, sizeof(slot));
	if (err)
		return err;
	if (memcmp(now, p->orig, p->len) != 0) {
		e[ne].addr = p->addr;
		e[ne].len = p->len;
		memcpy(e[ne].old, p->code, p->len);
		memcpy(e[ne++].new, p->orig, p->len);
		g[ng++] = (struct code_guard){p->addr + 1, p->addr + p->len};
	}
	if (p->veneer && memcmp(slot, zeros, sizeof(slot)) != 0) {
		uint64_t thunk;
		e[ne].addr = p->veneer;
		if (patch_thunk_is_slot(slot, p->veneer, &thunk)) {
			e[ne].len = PATCH_SLOT_LEN;
			memcpy(e[ne].old, slot, PATCH_SLOT_LEN);
			g[ng++] = (struct code_guard){thunk, thunk + PATCH_THUNK_READ_MAX};
		} else {
			e[ne].len = 16;
			encode_far_jump(e[ne].old, p->new_addr);
		}
		g[ng++] = (struct code_guard){p->veneer, p->veneer + e[ne].len};
		ne++;
	}
	return ne ? write_code(cfg, pid, r, e, ne, g, ng) : 0;
}

/* The patch of func that pid inherited from an ancestor: 0 with *rec, or
 * -ENOENT. */
static int inherited(const char *dir, pid_t pid, const char *func, struct patch_record *rec)
{
	pid_t a = pid;

	for (int depth = 0; depth < 64; depth++) {
		struct patch_record *v;
		size_t n;
		a = proc_parent(a);
		if (a <= 1)
			break;
		if (patch_registry_load(dir, a, &v, &n) != 0)
			continue;
		int at = record_has(v, n, func);
		if (at >= 0 && has_jump(pid, &v[at])) {
			*rec = v[at];
			rec->from = a;
			free(v);
			return 0;
		}
		free(v);
	}
	return -ENOENT;
}

static int undo(const struct patch_cfg *cfg, struct patch_result *r)
{
	struct patch_record *recs = NULL, own;
	size_t nrecs = 0;

	memset(r, 0, sizeof(*r));
	int err = patch_registry_load(cfg->dir, cfg->pid, &recs, &nrecs);
	if (err)
		return err == -EBADMSG ? refuse(r, PATCH_REGISTRY, err) : err;
	int at = record_has(recs, nrecs, cfg->func);
	if (at < 0) {
		/* A child's copy of its parent's patch: undone here only. */
		free(recs);
		if (inherited(cfg->dir, cfg->pid, cfg->func, &own) != 0)
			return refuse(r, PATCH_NOT_PATCHED, -ENOENT);
		r->addr = own.addr;
		r->new_addr = own.new_addr;
		r->veneer = own.veneer;
		r->inherited_from = own.from;
		snprintf(r->object, sizeof(r->object), "%s", own.lib);
		return undo_in(cfg, cfg->pid, &own, r);
	}
	struct patch_record *p = &recs[at];
	r->addr = p->addr;
	r->new_addr = p->new_addr;
	r->veneer = p->veneer;
	snprintf(r->object, sizeof(r->object), "%s", p->lib);
	err = undo_in(cfg, cfg->pid, p, r);
	if (!err) {
		/* Children forked since have the jump too. */
		pid_t *kids;
		size_t nkids;
		struct patch_result kr;
		if (proc_descendants(cfg->pid, &kids, &nkids) == 0) {
			for (size_t i = 0; i < nkids; i++) {
				if (!has_jump(kids[i], p))
					continue;
				memset(&kr, 0, sizeof(kr));
				if (undo_in(cfg, kids[i], p, &kr) == 0)
					r->children++;
				else
					r->children_failed++;
			}
			free(kids);
		}
		memmove(p, p + 1, (nrecs - (size_t)at - 1) * sizeof(*p));
		err = patch_registry_save(cfg->dir, cfg->pid, recs, nrecs - 1);
		if (err)
			err = refuse(r, PATCH_REGISTRY, err);
	}
	free(recs);
	return err;
}

/* Runs op with the lock on the process's code held. */
static int locked(int (*op)(const struct patch_cfg *, struct patch_result *),
		  const struct patch_cfg *cfg, struct patch_result *r)
{
	int fd;
	pid_t holder;

	int err = target_lock(cfg->pid, LOCK_WAIT_MS, &fd, &holder);
	if (err) {
		memset(r, 0, sizeof(*r));
		r->holder = holder;
		return err == -EBUSY ? refuse(r, PATCH_LOCKED, err) : err;
	}
	err = op(cfg, r);
	target_unlock(fd);
	return err;
}

int patch_apply(const struct patch_cfg *cfg, struct patch_result *r)
{
	return locked(apply, cfg, r);
}

int patch_undo(const struct patch_cfg *cfg, struct patch_result *r)
{
	return locked(undo, cfg, r);
}

int patch_list(const char *dir, pid_t pid, struct patch_record **v, size_t *n,
	       enum patch_state **states)
{
	*states = NULL;
	int err = patch_registry_load(dir, pid, v, n);
	if (err)
		return err;
	/* And the patches of its ancestors that it inherited at fork. */
	size_t cap = *n;
	pid_t a = pid;
	for (int depth = 0; depth < 64; depth++) {
		struct patch_record *anc;
		size_t na;
		a = proc_parent(a);
		if (a <= 1)
			break;
		if (patch_registry_load(dir, a, &anc, &na) != 0)
			continue;
		for (size_t i = 0; i < na; i++) {
			if (record_has(*v, *n, anc[i].func) >= 0 || !has_jump(pid, &anc[i]))
				continue;
			struct patch_record *nv = array_reserve(*v, &cap, *n + 1, sizeof(**v));
			if (!nv) {
				free(anc);
				return -ENOMEM;
			}
			*v = nv;
			nv[*n] = anc[i];
			nv[(*n)++].from = a;
		}
		free(anc);
	}
	if (!*n)
		return 0;
	*states = calloc(*n, sizeof(**states));
	if (!*states)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		uint8_t now[PATCH_BYTES];
		const struct patch_record *p = &(*v)[i];
		if (tmem_read(pid, p->addr, now, p->len) != 0)
			(*states)[i] = PATCH_CHANGED;
		else if (memcmp(now, p->code, p->len) == 0)
			(*states)[i] = PATCH_ACTIVE;
		else if (memcmp(now, p->orig, p->len) == 0)
			(*states)[i] = PATCH_REMOVED;
		else
			(*states)[i] = PATCH_CHANGED;
	}
	return 0;
}
