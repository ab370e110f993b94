/*
 * A traced function's exits (see trace-exits.h): its code read from the
 * object file at the function's file offset, decoded by func-exits.
 */
#include "trace/trace-exits.h"

#include "inject/fast-set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/mem-read.h"
#include "symbols/func-exits.h"
#include "symbols/symbolize.h"
#include "util/array.h"

#define MAX_FUNCTION_BYTES (16u << 20) /* larger is no function a compiler made */

int trace_exits_find(const struct trace_fn *fn, struct trace_exits *out, size_t *bad)
{
	struct func_exits fe = {0};
	int err = 0;

	out->n = 0;
	out->unprobed = 0;
	if (!fn->size)
		return -ENODATA;
	if (fn->size > MAX_FUNCTION_BYTES)
		return -EFBIG;
	uint8_t *code = malloc(fn->size);
	if (!code)
		return -ENOMEM;
	ssize_t got = pread(sym_file_fd(fn->file), code, fn->size, (off_t)fn->offset);
	if (got != (ssize_t)fn->size)
		err = -EIO;
	if (!err)
		err = func_exits_find(code, fn->size, fn->vaddr, &fe, bad);
	for (size_t i = 0; !err && i < fe.n; i++) {
		if (!func_exit_decidable(&fe.v[i])) {
			out->unprobed++;
			continue;
		}
		struct trace_exit *v = array_reserve(out->v, &out->cap, out->n + 1, sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		out->v = v;
		out->v[out->n++] = (struct trace_exit){fn->offset + fe.v[i].offset, fe.v[i]};
	}
	func_exits_release(&fe);
	free(code);
	return err;
}

const char *trace_exits_unknown(const struct trace_fn *fn)
{
	struct trace_exits ex = {0};
	size_t bad;
	int err = trace_exits_find(fn, &ex, &bad);

	trace_exits_release(&ex);
	switch (err) {
	case -ENODATA:
		return TRACE_EXITS_UNKNOWN ": its symbol has no size, so where its code ends is "
					   "unknown";
	case -EFBIG:
		return TRACE_EXITS_UNKNOWN ": its symbol claims more bytes than any compiled "
					   "function";
	case -EILSEQ:
		return TRACE_EXITS_UNKNOWN ": its code does not decode";
	default:
		return NULL;
	}
}

int trace_exits_fast(const struct trace_fn *fn, uint64_t addr, struct trace_exits *ex,
		     struct tramp_exit **out, size_t *n, size_t *undecided)
{
	size_t bad;

	*out = NULL;
	*n = 0;
	int err = trace_exits_find(fn, ex, &bad);
	if (err)
		return err;
	*undecided = ex->unprobed;
	struct tramp_exit *v = calloc(ex->n ? ex->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t k = 0; k < ex->n; k++) {
		const struct func_exit *how = &ex->v[k].how;
		if (how->kind != FUNC_EXIT_RET && how->kind != FUNC_EXIT_TAIL) {
			(*undecided)++;
			continue;
		}
		v[*n].addr = addr + (ex->v[k].offset - fn->offset);
		v[*n].len = how->length;
		v[(*n)++].probe = (int)k;
	}
	*out = v;
	return 0;
}

uint64_t trace_entry_offset(const struct trace_fn *fn)
{
	uint8_t code[64];
	size_t n = fn->size && fn->size < sizeof(code) ? fn->size : sizeof(code);

	if (!fn->go || pread(sym_file_fd(fn->file), code, n, (off_t)fn->offset) != (ssize_t)n)
		return fn->offset;
	return fn->offset + func_go_entry(code, n);
}

const char *trace_entry_unprobeable(const struct trace_fn *fn, uint64_t offset)
{
	uint8_t code[15]; /* the longest x86 instruction */
	ssize_t n = pread(sym_file_fd(fn->file), code, sizeof(code), (off_t)offset);

	if (n <= 0)
		return NULL; /* the kernel will say */
	if (fn->size && offset - fn->offset < fn->size &&
	    fn->size - (offset - fn->offset) < (size_t)n)
		n = (ssize_t)(fn->size - (offset - fn->offset));
	return func_unprobeable(code, (size_t)n);
}

const char *trace_code_changed(const struct trace_fn *fn, pid_t pid, uint64_t addr)
{
	uint8_t disk[4096], live[4096];
	size_t len = fn->size && fn->size < sizeof(disk) ? fn->size : sizeof(disk);

	ssize_t n = pread(sym_file_fd(fn->file), disk, len, (off_t)fn->offset);
	if (n <= 0)
		return NULL;
	ssize_t got = proc_mem_read(pid, addr, live, (size_t)n);
	for (ssize_t i = 0; i < got; i++)
		if (live[i] != disk[i] && live[i] != 0xcc)
			return "its code in the process differs from its file (patched by recce "
			       "patch or another tool): a probe would run half of each; undo the "
			       "patch first";
	return NULL;
}

void trace_exits_release(struct trace_exits *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}
