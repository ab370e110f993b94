/*
 * recce patch: replace a function of a running process with one from a
 * shared object, list the patches, undo one (patch/patch.h); the page
 * docs/recce-patch.md is its --help.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/inject-messages.h"
#include "cli/options.h"
#include "cli/usage.h"
#include "patch/patch.h"
#include "util/path.h"

struct patch_args {
	pid_t *pids;
	size_t npids;
	int list, force;
	const char *undo, *timeout, *dir;
};

static void pid_cb(void *ctx, const char *arg, const struct opt *o)
{
	struct patch_args *a = ctx;
	(void)o;
	parse_pid_list("patch", "-p", arg, &a->pids, &a->npids);
}

static const struct opt patch_options[] = {
    OPT_CALL_('p', "pid", "PID", pid_cb, 0, "the process to patch"),
    OPT_FLAG_('l', "list", struct patch_args, list, "list the process's patches"),
    OPT_STRING_(0, "undo", "FUNC", struct patch_args, undo, "put FUNC's own code back"),
    OPT_FLAG_('f', "force", struct patch_args, force,
	      "patch although the signatures differ or cannot be read"),
    OPT_STRING_(0, "timeout", "SECONDS", struct patch_args, timeout,
		"wait this long for threads to leave the bytes replaced (default 3)"),
    OPT_OUTPUT_(0, "registry", "DIR", struct patch_args, dir,
		"where patches are written down (default /run/recce/patches as root)"),
    OPT_END_(),
};

/* The registry: --registry, else /run/recce/patches as root, else
 * $XDG_RUNTIME_DIR/recce/patches, else /tmp/recce-UID/patches. */
static const char *registry_dir(const char *given, char *buf, size_t len)
{
	if (given)
		return given;
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (geteuid() == 0)
		snprintf(buf, len, "/run/recce/patches");
	else if (run && *run == '/')
		snprintf(buf, len, "%s/recce/patches", run);
	else
		snprintf(buf, len, "/tmp/recce-%u/patches", (unsigned)geteuid());
	return buf;
}

/* One message per refusal, saying what to do; exits 1. */
static void refused(const struct patch_args *a, pid_t pid, const char *func,
		    const struct patch_result *r, int err)
{
	switch (r->refusal) {
	case PATCH_NO_FUNC:
		die("no object mapped by process %d defines a function %s", (int)pid, func);
	case PATCH_AMBIGUOUS:
		die("%s is defined by several objects of process %d (%s): recce patches one "
		    "definition only",
		    func, (int)pid, r->detail);
	case PATCH_NEW_MISSING:
		die("the new object does not define the function named after ':'");
	case PATCH_NO_SIGNATURE:
		die("cannot compare signatures: %s has no DWARF for its function; build it with "
		    "-g, or give --force if you know they match",
		    r->detail);
	case PATCH_SIGNATURE:
		die("signatures differ: %s is '%s', its replacement '%s'; give --force if the "
		    "calling convention still matches",
		    func, r->old_sig, r->new_sig);
	case PATCH_SHORT:
		die("%s is %" PRIu64 " bytes long, shorter than the 5-byte jump a patch writes",
		    func, r->size);
	case PATCH_BRANCH_INTO:
		die("%s jumps back into its own first 5 bytes (from offset %" PRIu64 "), which a "
		    "patch would replace: it cannot be patched safely",
		    func, r->branch_at);
	case PATCH_UNDECODABLE:
		die("the machine code of %s does not decode, so recce cannot check it for jumps "
		    "into the bytes it would replace",
		    func);
	case PATCH_CODE_CHANGED:
		die("the code of %s in process %d differs from its file: a breakpoint, a probe "
		    "or another tool's patch is there; remove it first",
		    func, (int)pid);
	case PATCH_ALREADY:
		die("%s is already patched in process %d; undo it first (recce patch -p %d "
		    "--undo %s)",
		    func, (int)pid, (int)pid, func);
	case PATCH_NOT_PATCHED:
		die("recce has no patch of %s in process %d (recce patch -p %d --list shows "
		    "them)",
		    func, (int)pid, (int)pid);
	case PATCH_INJECT:
		die("cannot load code into process %d: %s", (int)pid,
		    inject_words(r->inject_refusal));
	case PATCH_LOAD:
		die("process %d could not load the object: %s", (int)pid,
		    r->detail[0] ? r->detail : "dlopen failed");
	case PATCH_NOT_LOADED:
		die("process %d loaded the object but recce cannot find it among its mappings",
		    (int)pid);
	case PATCH_NO_THUNK:
		die("librecce-patch.so, the code recce puts between %s and its replacement, is "
		    "not installed (looked in %s): install recce with 'make install', or set "
		    "RECCE_PATCH_LIB to its path",
		    func, r->detail);
	case PATCH_NO_VENEER:
		die("no room for the jump to recce's thunk within 2 GiB of %s in process %d", func,
		    (int)pid);
	case PATCH_BUSY:
		die("thread %d of process %d stayed %s %s for the whole timeout; try again, or "
		    "give a longer --timeout",
		    (int)r->write.busy_tid, (int)pid,
		    r->write.busy_on_stack ? "with a return address into the first bytes of"
					   : "inside the first bytes of",
		    func);
	case PATCH_STALE:
		die("the code of %s in process %d changed while recce worked on it; nothing was "
		    "written",
		    func, (int)pid);
	case PATCH_LOCKED:
		die("%s is changing the code of process %d (patching it, or tracing it with "
		    "--fast); one at a time: try again when it is done",
		    inject_holder_words(r->holder), (int)pid);
	case PATCH_REGISTRY:
		die("cannot use the patch registry in %s: %s", a->dir, strerror(-err));
	default:
		break;
	}
	inject_die_errno(pid, err);
	if (err == -ETIMEDOUT)
		die("process %d did not finish loading the object within 10 s; it goes on by "
		    "itself, but nothing was patched",
		    (int)pid);
	die("cannot patch %s in process %d: %s", func, (int)pid, strerror(-err));
}

static void list(const struct patch_args *a, pid_t pid)
{
	struct patch_record *v;
	enum patch_state *st;
	size_t n;
	static const char *const words[] = {"active", "removed", "changed"};

	int err = patch_list(a->dir, pid, &v, &n, &st);
	if (err == -ESRCH)
		die("process %d is gone", (int)pid);
	if (err)
		die("cannot read the patch registry in %s: %s", a->dir, strerror(-err));
	if (n)
		printf("%-24s %-18s %-8s %-19s %s\n", "FUNCTION", "ADDRESS", "STATE", "SINCE",
		       "REPLACED BY");
	for (size_t i = 0; i < n; i++) {
		char when[32];
		time_t t = (time_t)v[i].since;
		struct tm tm;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
		char from[48] = "";
		if (v[i].from)
			snprintf(from, sizeof(from), " (inherited from process %d)",
				 (int)v[i].from);
		printf("%-24s 0x%-16" PRIx64 " %-8s %-19s %s:%s%s\n", v[i].func, v[i].addr,
		       words[st[i]], when, v[i].lib, v[i].newfunc, from);
	}
	if (!n)
		note("process %d has no patches", (int)pid);
	free(v);
	free(st);
}

int cmd_patch(int argc, char **argv)
{
	struct patch_args a;
	char dir[PATH_MAX], lib[PATH_MAX];
	long long timeout_ms = 3000;

	memset(&a, 0, sizeof(a));
	int first = options_parse("patch", patch_options, 0, argc, argv, &a, NULL);
	if (a.npids != 1)
		usage_die("patch", "give one process with -p PID");
	pid_t pid = a.pids[0];
	free(a.pids);
	a.dir = registry_dir(a.dir, dir, sizeof(dir));
	if (a.timeout)
		timeout_ms = (long long)(option_seconds("patch", "--timeout", a.timeout, 3) * 1000);
	int modes = (a.list != 0) + (a.undo != NULL) + (first < argc);
	if (modes != 1)
		usage_die("patch", "give one of FUNC=OBJECT.so[:NEWFUNC], --list or --undo FUNC");
	if (first < argc && first + 1 != argc)
		usage_die("patch", "give one FUNC=OBJECT.so[:NEWFUNC] at a time");
	check_pids_exist(&pid, 1);
	if (a.list) {
		list(&a, pid);
		return 0;
	}
	struct patch_cfg cfg = {pid, a.undo, NULL, NULL, a.force, (int)timeout_ms, a.dir};
	struct patch_result r;
	if (a.undo) {
		int err = patch_undo(&cfg, &r);
		if (err)
			refused(&a, pid, a.undo, &r, err);
		printf("recce: %s in process %d runs its own code again (stopped %.2f ms)\n",
		       a.undo, (int)pid, (double)r.write.stopped_ns / 1e6);
		if (r.inherited_from)
			printf("  inherited  from process %d, whose patch stays\n",
			       (int)r.inherited_from);
		if (r.children || r.children_failed)
			printf("  children   %zu forked from it had the patch: undone in %zu%s\n",
			       r.children + r.children_failed, r.children,
			       r.children_failed ? " (the others did not let recce in)" : "");
		return 0;
	}
	/* FUNC=OBJECT.so[:NEWFUNC] */
	char *spec = argv[first];
	char *eq = strchr(spec, '=');
	if (!eq || eq == spec || !eq[1])
		usage_die("patch", "'%s' is not FUNC=OBJECT.so[:NEWFUNC]", spec);
	*eq = 0;
	char *colon = strrchr(eq + 1, ':');
	if (colon)
		*colon = 0;
	cfg.func = spec;
	cfg.newfunc = colon && colon[1] ? colon + 1 : spec;
	if (!realpath(eq + 1, lib))
		die("cannot read %s: %s", eq + 1, strerror(errno));
	cfg.lib = lib;
	int err = patch_apply(&cfg, &r);
	if (err)
		refused(&a, pid, cfg.func, &r, err);
	printf("recce: patched %s in process %d: calls now go to %s in %s\n", cfg.func, (int)pid,
	       cfg.newfunc, path_base(lib));
	if (r.old_sig[0] && r.new_sig[0])
		printf("  signature  %s%s\n", r.old_sig,
		       strcmp(r.old_sig, r.new_sig) == 0 ? ", the same in both" : " (forced)");
	printf("  code       0x%" PRIx64 " jumps to 0x%" PRIx64
	       " through recce's register-keeping thunk\n",
	       r.addr, r.new_addr);
	printf("  stopped    %.2f ms to load (thread %d ran dlopen for %.1f ms), %.2f ms to "
	       "write (%zu threads, %d attempt%s)\n",
	       (double)r.load_stopped_ns / 1e6, (int)r.loader_thread, (double)r.load_ns / 1e6,
	       (double)r.write.stopped_ns / 1e6, r.write.threads, r.write.attempts,
	       r.write.attempts == 1 ? "" : "s");
	printf("  undo       recce patch -p %d --undo %s\n", (int)pid, cfg.func);
	return 0;
}
