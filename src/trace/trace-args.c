/*
 * DWARF signatures and argument values of traced functions (see
 * trace-args.h). An argument's place is the register its DWARF location
 * names at the entry, else the one the ABI gives it (SysV, or Go's): a
 * float travels in an xmm register and is shown as "?", a struct passed
 * by value takes the registers its eightbytes' classes give it, and one
 * this model cannot place leaves the rest of the assignment uncertain,
 * so those parameters are shown as "?" too, never as a wrong value. An
 * object returned in memory is described here (its members, or a
 * std::string's layout) so that the return probe can copy it, and turned
 * into text from those bytes.
 */
#include "trace/trace-args.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/arg-place.h"
#include "perf/hit-format.h"
#include "proc/mem-read.h"
#include "symbols/sym-func.h"
#include "symbols/symbolize.h"
#include "util/x86-regs.h"

/* Whether a class or struct type is passed and returned by invisible
 * reference (DW_AT_calling_convention DW_CC_pass_by_reference, which GCC
 * and Clang write for C++ types with a non-trivial copy or destructor). */
static int by_reference(Dwarf_Die *type)
{
	Dwarf_Attribute at;
	Dwarf_Word cc;

	return dwarf_attr_integrate(type, DW_AT_calling_convention, &at) &&
	       dwarf_formudata(&at, &cc) == 0 && cc == DW_CC_pass_by_reference;
}

/* Whether a function returning the type of die returns it in memory: the
 * caller passes where in rdi (the hidden first argument) and gets the same
 * address back in rax. Under the SysV ABI: a struct, class or union over
 * 16 bytes, or one passed by invisible reference. */
static int returns_in_memory(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die type;

	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, &type))
		return 0;
	int tag = arg_peel_type(&type);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
		return 0;
	return dwarf_bytesize(&type) > 16 || by_reference(&type);
}

/* Classifies the type referred to by die's DW_AT_type. */
static uint32_t classify(Dwarf_Die *die, int *size)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	Dwarf_Word enc;

	*size = 8;
	/* Through DW_AT_specification: a C++ definition outside its class or
	 * namespace keeps its return type on the declaration. */
	if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, &type))
		return TRACE_ARG_NONE; /* void */
	int tag = arg_peel_type(&type);
	switch (tag) {
	case DW_TAG_pointer_type: {
		Dwarf_Die to;
		if (dwarf_attr(&type, DW_AT_type, &at) && dwarf_formref_die(&at, &to) &&
		    arg_peel_type(&to) == DW_TAG_base_type &&
		    dwarf_attr(&to, DW_AT_encoding, &at) && dwarf_formudata(&at, &enc) == 0 &&
		    (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char))
			return TRACE_ARG_STR;
		return TRACE_ARG_HEX;
	}
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return TRACE_ARG_HEX;
	case DW_TAG_enumeration_type:
		*size = dwarf_bytesize(&type) > 0 ? dwarf_bytesize(&type) : 4;
		return TRACE_ARG_INT;
	case DW_TAG_base_type:
		break;
	default:
		/* A C++ object the ABI passes by invisible reference (it has a
		 * non-trivial copy or destructor): its address, in one integer
		 * register. */
		if (by_reference(&type))
			return TRACE_ARG_HEX;
		return TRACE_ARG_UNKNOWN; /* struct, union, array */
	}
	int bytes = dwarf_bytesize(&type);
	*size = bytes > 0 && bytes <= 8 ? bytes : 8;
	if (!dwarf_attr(&type, DW_AT_encoding, &at) || dwarf_formudata(&at, &enc) != 0)
		return TRACE_ARG_HEX;
	if (bytes > 8)
		return TRACE_ARG_UNKNOWN; /* __int128, long double */
	switch (enc) {
	case DW_ATE_signed:
		return TRACE_ARG_INT;
	case DW_ATE_unsigned:
		return TRACE_ARG_UINT;
	case DW_ATE_boolean:
		return TRACE_ARG_BOOL;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		return TRACE_ARG_CHAR;
	case DW_ATE_float:
		return TRACE_ARG_UNKNOWN;
	default:
		return TRACE_ARG_HEX;
	}
}

/* Whether a class is libstdc++'s std::string (the C++11 ABI's layout:
 * _M_dataplus, whose only member is the data pointer, then the length). */
static int is_std_string(Dwarf_Die *type)
{
	const char *name = dwarf_diename(type);
	Dwarf_Die m;
	Dwarf_Word off;
	int seen = 0;

	if (!name || strncmp(name, "basic_string<char,", 18) != 0 || dwarf_child(type, &m) != 0)
		return 0;
	do {
		const char *mn = dwarf_diename(&m);
		if (dwarf_tag(&m) != DW_TAG_member || !mn || !arg_member_offset(&m, &off))
			continue;
		if (strcmp(mn, "_M_dataplus") == 0 && off == 0)
			seen |= 1;
		else if (strcmp(mn, "_M_string_length") == 0 && off == 8)
			seen |= 2;
	} while (dwarf_siblingof(&m, &m) == 0);
	return seen == 3;
}

/* What of the object a function returns in memory (of type, peeled) can
 * be shown at its return. */
static void describe_object(Dwarf_Die *type, struct trace_ret_object *o)
{
	Dwarf_Die m;

	memset(o, 0, sizeof(*o));
	if (is_std_string(type)) {
		o->string = 1;
		o->size = 16;
		return;
	}
	if (dwarf_child(type, &m) != 0)
		return; /* a declaration only: its members are elsewhere */
	do {
		int tag = dwarf_tag(&m);
		if (tag == DW_TAG_inheritance) {
			o->more = 1;
			continue;
		}
		Dwarf_Word off;
		if (tag != DW_TAG_member || !arg_member_offset(&m, &off)) {
			o->more |= tag == DW_TAG_member; /* a bit-field */
			continue;			 /* static members, methods, types */
		}
		int size;
		uint32_t kind = classify(&m, &size);
		if (kind == TRACE_ARG_UNKNOWN && arg_is_float(&m) && (size == 4 || size == 8))
			kind = TRACE_ARG_FLOAT;
		const char *name = dwarf_diename(&m);
		if (kind == TRACE_ARG_STR)
			kind = TRACE_ARG_HEX; /* the text it points to is not read */
		if (kind == TRACE_ARG_UNKNOWN || kind == TRACE_ARG_NONE || !name ||
		    off + (Dwarf_Word)size > TRACE_OBJECT_MAX ||
		    o->nmembers == TRACE_OBJECT_MEMBERS) {
			o->more = 1;
			continue;
		}
		trace_copy_str(o->m[o->nmembers].name, sizeof(o->m[0].name), name);
		o->m[o->nmembers].offset = (uint16_t)off;
		o->m[o->nmembers].kind = (uint8_t)kind;
		o->m[o->nmembers].size = (uint8_t)size;
		o->nmembers++;
		if (off + (Dwarf_Word)size > o->size)
			o->size = (uint16_t)(off + (Dwarf_Word)size);
	} while (dwarf_siblingof(&m, &m) == 0);
	if (!o->nmembers)
		o->size = 0;
}

/* A compiler's clone or fragment (".constprop.0", ".isra.0", ".part.0",
 * ".cold"): not Go's "main.f", whose dot is the package's. */
static int is_clone(const char *symname)
{
	return strstr(symname, ".constprop.") || strstr(symname, ".isra.") ||
	       strstr(symname, ".part.") || strstr(symname, ".cold") ||
	       strstr(symname, ".lto_priv.");
}

/* Records parameter n (param, classified as kind and size) in sig, in
 * the place arg_place() finds for it. */
static void add_param(struct trace_sig *sig, int n, Dwarf_Die *param, uint32_t kind, int size,
		      struct arg_assign *ra)
{
	int reg, len_reg, why;

	kind = arg_place(ra, param, kind, &reg, &len_reg, &why);
	if (n >= TRACE_MAX_ARGS)
		return;
	const char *name = dwarf_diename(param);
	if (name)
		trace_copy_str(sig->params[n].name, sizeof(sig->params[n].name), name);
	else
		snprintf(sig->params[n].name, sizeof(sig->params[n].name), "arg%d", n);
	sig->params[n].kind = kind;
	sig->params[n].size = size;
	sig->params[n].reg = reg;
	sig->params[n].len_reg = len_reg;
	sig->params[n].why = (uint8_t)why; /* TRACE_WHY_NONE when placed */
}

/* Whether a Go parameter DIE is a result (DW_AT_variable_parameter). */
static int is_go_result(Dwarf_Die *param)
{
	Dwarf_Attribute at;
	bool flag = false;

	return dwarf_attr(param, DW_AT_variable_parameter, &at) &&
	       dwarf_formflag(&at, &flag) == 0 && flag;
}

/*
 * Go's register ABI (ABIInternal, amd64): integer arguments in RAX, RBX,
 * RCX, RDI, RSI, R8, R9, R10, R11, in order, results from RAX; floats in
 * X0-X14 leave those alone. A string, slice, interface or struct takes
 * several registers or the stack, so the ones after it are not shown.
 */
static void describe_go(Dwarf_Die *sub, uint64_t vaddr, struct trace_sig *sig)
{
	Dwarf_Die child;
	struct arg_assign ra, rr;
	int n = 0, have_ret = 0;

	arg_assign_init(&ra, sub, vaddr, 1, 0);
	arg_assign_init(&rr, sub, vaddr, 1, 0);
	sig->ret_kind = TRACE_ARG_NONE;
	if (dwarf_child(sub, &child) != 0)
		goto done;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		int size;
		uint32_t kind = classify(&child, &size);
		if (is_go_result(&child)) {
			if (!have_ret++) {
				sig->ret_kind = kind == TRACE_ARG_STR ? TRACE_ARG_HEX : kind;
				sig->ret_size = size;
			}
			if (sig->nrets < TRACE_MAX_ARGS) {
				int reg, reg2, iface;
				uint32_t rk = kind == TRACE_ARG_STR ? TRACE_ARG_HEX : kind;
				rk = arg_place_go_result(&rr, &child, rk, &reg, &reg2, &iface);
				sig->rets[sig->nrets].kind = (uint8_t)rk;
				sig->rets[sig->nrets].size =
				    (uint8_t)(size > 0 && size <= 8 ? size : 8);
				sig->rets[sig->nrets].iface = (uint8_t)iface;
				sig->rets[sig->nrets].reg = (int8_t)reg;
				sig->rets[sig->nrets].reg2 = (int8_t)reg2;
				sig->nrets++;
			}
			continue;
		}
		if (kind == TRACE_ARG_STR)
			kind = TRACE_ARG_HEX; /* a *byte, not a NUL-terminated string */
		add_param(sig, n, &child, kind, size, &ra);
		n++;
	} while (dwarf_siblingof(&child, &child) == 0);
done:
	sig->arity = n;
	sig->nparams = n < TRACE_MAX_ARGS ? n : TRACE_MAX_ARGS;
	sig->go = 1;
	sig->known = 1;
}

/* Whether a Rust function returns a &str, which its ABI returns as a
 * pair of scalars: the pointer in rax, the length in rdx. */
static int returns_rust_str(Dwarf_Die *sub)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	const char *name;

	return dwarf_attr_integrate(sub, DW_AT_type, &at) && dwarf_formref_die(&at, &type) &&
	       dwarf_tag(&type) == DW_TAG_structure_type && (name = dwarf_diename(&type)) &&
	       strcmp(name, "&str") == 0 && dwarf_bytesize(&type) == 16;
}

/* A &str result, shown as its text (trace_args_format_results()). */
static void rust_str_result(struct trace_sig *sig)
{
	sig->ret_kind = TRACE_ARG_HEX;
	sig->nrets = 1;
	sig->rets[0] = (struct trace_result){
	    .kind = TRACE_ARG_STR, .size = 8, .iface = 0, .reg = X86_RAX, .reg2 = X86_RDX};
}

int trace_args_describe(struct sym_file *f, const char *symname, uint64_t vaddr,
			struct trace_sig *sig)
{
	Dwarf_Die sub;

	memset(sig, 0, sizeof(*sig));
	sig->arity = -1;
	if (symname && is_clone(symname)) {
		sig->reason = "a compiler-made clone, whose arguments need not follow the ABI";
		return -ENOENT;
	}
	int err = sym_func_die(f, vaddr, &sub);
	if (err == -ENODATA) {
		sig->reason = "no DWARF debug info for it";
		return -ENOENT;
	}
	if (err) {
		sig->reason = "its DWARF does not describe this entry point";
		return -ENOENT;
	}
	if (sym_file_is_go(f)) {
		describe_go(&sub, vaddr, sig);
		return 0;
	}
	/* An out-of-line definition points at its declaration for the
	 * parameters only through DW_AT_specification; the children of the
	 * definition are what the compiler emitted for this body. */
	Dwarf_Die child;
	int in_memory = returns_in_memory(&sub);
	struct arg_assign ra;
	arg_assign_init(&ra, &sub, vaddr, 0, in_memory);
	int n = 0;
	if (dwarf_child(&sub, &child) == 0) {
		do {
			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			int size;
			uint32_t kind = classify(&child, &size);
			add_param(sig, n, &child, kind, size, &ra);
			n++;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	sig->arity = n;
	sig->nparams = n < TRACE_MAX_ARGS ? n : TRACE_MAX_ARGS;
	sig->ret_size = 8;
	sig->ret_kind = in_memory ? TRACE_ARG_OBJECT : classify(&sub, &sig->ret_size);
	/* LLVM marks a function whose calling convention it changed (an
	 * unused argument or result dropped) nocall: what rax holds at its
	 * return need not be its result, so none is shown. */
	Dwarf_Attribute cc;
	Dwarf_Word ccv;
	if (sig->ret_kind != TRACE_ARG_NONE &&
	    dwarf_attr_integrate(&sub, DW_AT_calling_convention, &cc) &&
	    dwarf_formudata(&cc, &ccv) == 0 && ccv == DW_CC_nocall)
		sig->ret_kind = TRACE_ARG_UNKNOWN;
	else if (ra.lang == DW_LANG_Rust && returns_rust_str(&sub))
		rust_str_result(sig);
	Dwarf_Attribute at;
	Dwarf_Die type;
	if (in_memory && dwarf_attr_integrate(&sub, DW_AT_type, &at) &&
	    dwarf_formref_die(&at, &type)) {
		arg_peel_type(&type);
		describe_object(&type, &sig->ret_object);
	}
	sig->known = 1;
	return 0;
}

int trace_read_string(pid_t pid, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (cap < 2)
		return -EFAULT;
	/* Read page by page: one unmapped page after a short string must not
	 * fail the whole read. */
	while (got < cap - 1) {
		uint64_t at = addr + got;
		size_t want = 4096 - (size_t)(at & 4095);
		if (want > cap - 1 - got)
			want = cap - 1 - got;
		ssize_t n = proc_mem_read(pid, at, buf + got, want);
		if (n <= 0) {
			if (got == 0)
				return n < 0 ? (int)n : -EFAULT;
			break;
		}
		void *nul = memchr(buf + got, 0, (size_t)n);
		if (nul)
			return 0;
		got += (size_t)n;
	}
	buf[got] = 0;
	return got >= cap - 1 ? 1 : 0;
}

/* A string given as a pointer and a length (Go, Rust): its first cap-1
 * bytes at most (shown up to a NUL byte in it, if any). Returns 0, 1 if
 * cut, or -errno. */
static int read_counted(pid_t pid, uint64_t addr, uint64_t len, char *buf, size_t cap)
{
	size_t want = len < cap - 1 ? (size_t)len : cap - 1;

	buf[0] = 0;
	if (len == 0)
		return 0; /* "" may have any pointer, even NULL */
	if (len > (1ULL << 40))
		return -EFAULT;
	int err = proc_mem_read_all(pid, addr, buf, want);
	if (err)
		return err;
	buf[want] = 0;
	return len > want;
}

int trace_read_word(pid_t pid, uint64_t addr, uint64_t *val)
{
	return proc_mem_read_all(pid, addr, val, sizeof(*val));
}

/* The register narrowed to its declared size, sign-extended for signed. */
static uint64_t narrow(uint64_t v, uint32_t kind, int size)
{
	if (size >= 8)
		return v;
	uint64_t mask = (1ULL << (size * 8)) - 1;
	v &= mask;
	if (kind == TRACE_ARG_INT && (v >> (size * 8 - 1)) & 1)
		v |= ~mask;
	return v;
}

void trace_args_str_plan(const struct trace_sig *sig, struct trace_str_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->len_reg = -1;
	for (int i = 0; sig->known && i < sig->nparams && plan->n < 2; i++) {
		if (sig->params[i].kind != TRACE_ARG_STR || sig->params[i].reg < 0)
			continue;
		if (sig->params[i].len_reg >= 0) {
			if (plan->n)
				continue; /* a counted string is copied alone */
			plan->param[0] = i;
			plan->reg[0] = sig->params[i].reg;
			plan->len_reg = sig->params[i].len_reg;
			plan->n = 1;
			return;
		}
		plan->param[plan->n] = i;
		plan->reg[plan->n++] = sig->params[i].reg;
	}
}

/* A string argument as the probe copied it (len bytes; of a NUL-ended
 * string, as many as it held before its NUL or UBPF's 63), into a->str:
 * 0, or 1 when cut. */
static int copied_string(const uint8_t *bytes, size_t len, uint64_t whole, struct trace_arg *a)
{
	size_t keep = len < sizeof(a->str) - 1 ? len : sizeof(a->str) - 1;

	memcpy(a->str, bytes, keep);
	a->str[keep] = 0;
	return whole > keep;
}

void trace_args_fill(const struct trace_sig *sig, const uint64_t *gpr, uint32_t have, pid_t pid,
		     const struct trace_copied_args *copy, int raw, struct trace_record *r)
{
	struct trace_str_plan plan;

	trace_args_str_plan(sig, &plan);
	for (int i = 0; i < TRACE_MAX_ARGS; i++)
		r->regs[i] = gpr[arg_sysv_regs[i]];
	r->arity = sig->arity;
	r->ret_kind = (uint8_t)(sig->known ? sig->ret_kind : TRACE_ARG_HEX);
	r->nargs = 0;
	if (!sig->known) {
		if (!raw)
			return;
		for (int i = 0; i < TRACE_MAX_ARGS; i++) {
			struct trace_arg *a = &r->args[i];
			memset(a, 0, sizeof(*a));
			snprintf(a->name, sizeof(a->name), "arg%d", i);
			a->kind = TRACE_ARG_HEX;
			a->value = r->regs[i];
		}
		r->nargs = TRACE_MAX_ARGS;
		return;
	}
	for (int i = 0; i < sig->nparams; i++) {
		struct trace_arg *a = &r->args[i];
		memset(a, 0, sizeof(*a));
		memcpy(a->name, sig->params[i].name, sizeof(a->name));
		a->kind = sig->params[i].kind;
		int reg = sig->params[i].reg, len_reg = sig->params[i].len_reg;
		if (reg < 0) {
			a->flags = TRACE_ARG_WHY_SET(sig->params[i].why);
			continue; /* shown as "?" */
		}
		if (!(have >> reg & 1) || (len_reg >= 0 && !(have >> len_reg & 1))) {
			a->kind = TRACE_ARG_UNKNOWN;
			a->flags = TRACE_ARG_WHY_SET(TRACE_WHY_UNSEEN);
			continue;
		}
		a->value = narrow(gpr[reg], a->kind, sig->params[i].size);
		if (a->kind != TRACE_ARG_STR)
			continue;
		/* Copied at the call where the probe could (a string of 63
		 * bytes or more may have been cut there); else read now. */
		int k = plan.n > 0 && plan.param[0] == i   ? 0
			: plan.n > 1 && plan.param[1] == i ? 1
							   : -1;
		int rc;
		if (k >= 0 && copy && copy->bytes[k])
			rc = copied_string(copy->bytes[k], copy->len[k],
					   len_reg >= 0				  ? gpr[len_reg]
					   : copy->len[k] >= UBPF_CAPTURE_MAX - 1 ? UINT64_MAX
										  : copy->len[k],
					   a);
		else
			rc = len_reg >= 0
				 ? read_counted(pid, gpr[reg], gpr[len_reg], a->str, sizeof(a->str))
				 : trace_read_string(pid, gpr[reg], a->str, sizeof(a->str));
		if (rc < 0)
			a->flags |= TRACE_STR_UNREADABLE;
		else if (rc > 0)
			a->flags |= TRACE_STR_TRUNCATED;
	}
	r->nargs = (uint8_t)sig->nparams;
}

/* The return value narrowed like an argument (used by cmd-trace). */
uint64_t trace_args_narrow_ret(const struct trace_sig *sig, uint64_t rax)
{
	return sig->known ? narrow(rax, sig->ret_kind, sig->ret_size) : rax;
}

/* Appends to out what printf formats, never past cap; false once full. */
static bool append(char *out, size_t cap, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool append(char *out, size_t cap, size_t *at, const char *fmt, ...)
{
	va_list ap;

	if (*at >= cap)
		return false;
	va_start(ap, fmt);
	int n = vsnprintf(out + *at, cap - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *at) {
		out[*at] = 0; /* never half a value */
		*at = cap;
		return false;
	}
	*at += (size_t)n;
	return true;
}

/* A std::string's text in C syntax: "key-7", bytes outside printable
 * ASCII as \xNN, "..." after the quote when cut. */
static void format_string(const uint8_t *str, uint64_t len, char *out, size_t cap)
{
	size_t at = 0, have = len < TRACE_OBJECT_MAX ? (size_t)len : TRACE_OBJECT_MAX;
	size_t i;

	/* Room for the closing quote and "..." is kept back. */
	if (cap < 8) {
		out[0] = 0;
		return;
	}
	append(out, cap - 4, &at, "\"");
	for (i = 0; i < have; i++) {
		unsigned c = str[i];
		bool ok = c == '"' || c == '\\'	  ? append(out, cap - 4, &at, "\\%c", c)
			  : c < 0x20 || c >= 0x7f ? append(out, cap - 4, &at, "\\x%02x", c)
						  : append(out, cap - 4, &at, "%c", c);
		if (!ok)
			break;
	}
	at = strlen(out);
	snprintf(out + at, cap - at, "\"%s", i < len ? "..." : "");
}

/* A float or double's bits as the shortest text that reads back the same
 * (0.07, not 0.070000000000000007). */
static void format_float(char *buf, size_t len, uint64_t bits, int size)
{
	double d;

	if (size == 4) {
		float f;
		memcpy(&f, &bits, 4);
		d = f;
	} else {
		memcpy(&d, &bits, 8);
	}
	for (int prec = size == 4 ? 6 : 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (size == 4 ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
			return;
	}
}

int trace_args_results_text(const struct trace_sig *sig)
{
	if (!sig->known || !sig->nrets)
		return 0; /* results are listed for Go, and Rust's &str */
	for (int i = 0; i < sig->nrets; i++)
		if (sig->rets[i].kind == TRACE_ARG_STR || sig->rets[i].iface)
			return 1;
	return sig->nrets > 1;
}

int trace_args_string_result(const struct trace_sig *sig)
{
	if (!trace_args_results_text(sig))
		return -1;
	for (int i = 0; i < sig->nrets; i++)
		if (sig->rets[i].kind == TRACE_ARG_STR && !sig->rets[i].iface &&
		    sig->rets[i].reg >= 0 && sig->rets[i].reg2 >= 0)
			return i;
	return -1;
}

void trace_args_format_results(const struct trace_sig *sig, const uint64_t *gpr, uint32_t have,
			       pid_t pid, const struct trace_copied_str *copy, char *out, size_t cap)
{
	int copied = copy && copy->bytes ? trace_args_string_result(sig) : -1;

	size_t at = 0;

	if (cap < 8) {
		if (cap)
			out[0] = 0;
		return;
	}
	out[0] = 0;
	cap -= 5; /* room for ", ...)" cut short */
	/* Go's results are a list; another language's one result is alone. */
	const char *open = sig->go ? "(" : "", *close = sig->go ? ")" : "";
	append(out, cap, &at, "%s", open);
	int i;
	for (i = 0; i < sig->nrets; i++) {
		const struct trace_result *rv = &sig->rets[i];
		char val[TRACE_OBJECT_MAX * 4 + 8];
		int known = rv->reg >= 0 && (have >> rv->reg & 1) &&
			    (rv->reg2 < 0 || (have >> rv->reg2 & 1));
		uint64_t v = known ? gpr[rv->reg] : 0;
		if (!known) {
			snprintf(val, sizeof(val), "?");
		} else if (rv->iface) {
			/* nil is both words 0; the type word names the type only
			 * through the runtime's tables, so the data word is shown. */
			if (!v && !gpr[rv->reg2])
				snprintf(val, sizeof(val), "nil");
			else
				snprintf(val, sizeof(val), "non-nil(0x%llx)",
					 (unsigned long long)gpr[rv->reg2]);
		} else if (rv->kind == TRACE_ARG_STR) {
			char text[TRACE_OBJECT_MAX + 1];
			uint64_t len = gpr[rv->reg2];
			if (i == copied && copy->len >= (len < TRACE_OBJECT_MAX ? len : TRACE_OBJECT_MAX))
				format_string(copy->bytes, len, val, sizeof(val));
			else if (read_counted(pid, v, len, text, sizeof(text)) < 0)
				snprintf(val, sizeof(val), "?");
			else
				format_string((const uint8_t *)text, len, val, sizeof(val));
		} else {
			trace_format_value(val, sizeof(val), rv->kind,
					   narrow(v, rv->kind, rv->size));
		}
		if (!append(out, cap, &at, "%s%s", i ? ", " : "", val))
			break;
	}
	at = strlen(out);
	snprintf(out + at, cap + 5 - at, "%s%s", i < sig->nrets ? ", ..." : "", close);
}

void trace_args_format_object(const struct trace_ret_object *o, const uint8_t *obj, size_t len,
			      const uint8_t *str, uint64_t str_len, char *out, size_t cap)
{
	size_t at = 0;

	if (!cap)
		return;
	out[0] = 0;
	if (o->string) {
		if (str)
			format_string(str, str_len, out, cap);
		return;
	}
	if (cap < 8)
		return;
	cap -= 6; /* room for ", ...}" */
	append(out, cap, &at, "{");
	int i;
	for (i = 0; i < o->nmembers; i++) {
		uint64_t v = 0;
		char val[64];
		if ((size_t)o->m[i].offset + o->m[i].size > len)
			break;
		memcpy(&v, obj + o->m[i].offset, o->m[i].size);
		if (o->m[i].kind == TRACE_ARG_FLOAT) {
			format_float(val, sizeof(val), v, o->m[i].size);
		} else {
			trace_format_value(val, sizeof(val), o->m[i].kind,
					   narrow(v, o->m[i].kind, o->m[i].size));
		}
		if (!append(out, cap, &at, "%s%.*s=%s", i ? ", " : "", (int)sizeof(o->m[i].name),
			    o->m[i].name, val))
			break;
	}
	at = strlen(out);
	snprintf(out + at, cap + 6 - at, "%s}",
		 i < o->nmembers || o->more ? (i ? ", ..." : "...") : "");
}
