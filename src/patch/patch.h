/*
 * Hot replacement of a function in a running process, the native form of
 * Erlang's code:load_binary: a shared object is loaded into the process
 * (inject/), and the old function's entry becomes a jump to the new one,
 * written with every thread stopped and none of them in the bytes it
 * replaces (inject/code-write). Calls made from then on run the new
 * code; calls already running finish in the old one. A patch outlives
 * the recce that made it; it is written down (patch-registry) for
 * patch_list() and patch_undo(), which writes the old bytes back the
 * same safe way. The loaded object stays: a thread may still run in it.
 * A child forked from a patched process runs the new code too: its copy
 * is listed with its parent's record and undone with it.
 *
 * The entry becomes a five-byte jump (jmp rel32) to a slot in a page
 * recce maps next to the old code ("[anon:recce-patch]"), which sends the
 * call through recce's thunk (patch-thunk.h) to the new function: every
 * register but the result comes back to the caller as it was, so callers
 * compiled to rely on registers the old function left alone (GCC's
 * -fipa-ra) keep working. Refused, unless forced where it says: a
 * function shorter than the jump, one whose own code jumps back into the
 * replaced bytes, code that differs from its file (a breakpoint or
 * another patch is there), and a replacement whose DWARF signature
 * differs (forced) or cannot be read (forced).
 */
#ifndef RECCE_PATCH_PATCH_H
#define RECCE_PATCH_PATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject/code-write.h"
#include "inject/inject.h"
#include "patch/patch-registry.h"

struct patch_cfg {
	pid_t pid;
	const char *func;    /* the function to replace (or undo) */
	const char *lib;     /* the shared object with the new one, absolute */
	const char *newfunc; /* its name there */
	int force;	     /* patch despite a different or unknown signature */
	int timeout_ms;	     /* for threads to leave the bytes replaced */
	const char *dir;     /* the registry's directory */
};

enum patch_refusal {
	PATCH_OK,
	PATCH_NO_FUNC,	    /* no mapped object defines func */
	PATCH_AMBIGUOUS,    /* several do (detail lists them) */
	PATCH_NEW_MISSING,  /* lib does not define newfunc */
	PATCH_NO_SIGNATURE, /* DWARF of one side missing (detail says which) */
	PATCH_SIGNATURE,    /* the signatures differ */
	PATCH_SHORT,	    /* func is shorter than the jump */
	PATCH_BRANCH_INTO,  /* func's own code jumps into the replaced bytes */
	PATCH_UNDECODABLE,  /* func's code does not decode */
	PATCH_CODE_CHANGED, /* func's bytes differ from its file */
	PATCH_ALREADY,	    /* func is patched already */
	PATCH_NOT_PATCHED,  /* undo of a function recce did not patch */
	PATCH_INJECT,	    /* injection refused (inject_refusal says why) */
	PATCH_LOAD,	    /* the target's dlopen failed (detail: dlerror) */
	PATCH_NOT_LOADED,   /* lib loaded, but not found mapped */
	PATCH_NO_THUNK,	    /* recce's librecce-patch.so is missing (detail: where) */
	PATCH_NO_VENEER,    /* no page for the jump to the thunk near func */
	PATCH_BUSY,	    /* a thread stayed in the replaced bytes */
	PATCH_STALE,	    /* the bytes changed under recce */
	PATCH_REGISTRY,	    /* the registry could not be read or written */
	PATCH_LOCKED,	    /* another recce is changing the process's code (holder) */
};

struct patch_result {
	enum patch_refusal refusal;
	enum inject_refusal inject_refusal;
	char object[1024];   /* the object holding func */
	uint64_t addr, size; /* func's entry in the process and its size */
	uint64_t new_addr, veneer;
	char old_sig[256], new_sig[256];
	char detail[512];
	uint64_t branch_at;   /* PATCH_BRANCH_INTO: the offset of the jump */
	pid_t holder;	      /* PATCH_LOCKED: the recce holding the lock, 0: unknown */
	pid_t inherited_from; /* undo: the patch was this ancestor's, undone here only */
	size_t children, children_failed; /* undo: descendants that had it too */
	pid_t loader_thread;
	uint64_t load_ns, load_stopped_ns;
	struct code_write_stats write;
};

/* Replaces cfg->func with cfg->newfunc of cfg->lib, holding the lock on
 * the process's code (inject/target-lock) while it works. Returns 0, or
 * -errno with r->refusal saying why when recce refused. */
int patch_apply(const struct patch_cfg *cfg, struct patch_result *r);

/* Writes cfg->func's old bytes back, in cfg->pid and in every process
 * forked from it that has the patch too (r->children). A child's copy
 * of a patch its parent made is undone in that child only
 * (r->inherited_from). Same returns. */
int patch_undo(const struct patch_cfg *cfg, struct patch_result *r);

enum patch_state {
	PATCH_ACTIVE,  /* the jump is in place */
	PATCH_REMOVED, /* the old bytes are back (not by recce) */
	PATCH_CHANGED, /* something else is there */
};

/* pid's patches and the state of each (states[i], caller's array of n),
 * with those it inherited from an ancestor at fork (from set). Returns 0
 * or -errno; *v is the caller's to free. */
int patch_list(const char *dir, pid_t pid, struct patch_record **v, size_t *n,
	       enum patch_state **states);

#endif
