/*
 * Where each argument of a function is at its first instruction (see
 * arg-place.h): the register its DWARF location names there, else the
 * one the ABI gives it. Under SysV an aggregate passed by value takes the
 * registers its eightbytes' classes give it (INTEGER ones; SSE ones go to
 * xmm; over 16 bytes, memory); under Go's register ABI one register per
 * integer or pointer leaf. Go's string and Rust's &str are a pointer and
 * a length in two registers. What this model cannot place leaves the
 * rest of the assignment uncertain rather than guessed.
 */
#include "trace/arg-place.h"

#include <dwarf.h>
#include <stdbool.h>
#include <string.h>

#include "trace/trace-event.h"
#include "util/x86-regs.h"

/* The integer argument registers in the order each ABI assigns them. */
const uint8_t arg_sysv_regs[6] = {X86_RDI, X86_RSI, X86_RDX, X86_RCX, X86_R8, X86_R9};
static const uint8_t go_regs[TRACE_GO_REGS] = {X86_RAX, X86_RBX, X86_RCX, X86_RDI, X86_RSI,
					       X86_R8,	X86_R9,	 X86_R10, X86_R11};

/* Follows typedefs and qualifiers to the type that decides the class. */
int arg_peel_type(Dwarf_Die *type)
{
	for (int depth = 0; depth < 16; depth++) {
		int tag = dwarf_tag(type);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return tag;
		Dwarf_Attribute at;
		if (!dwarf_attr(type, DW_AT_type, &at) || !dwarf_formref_die(&at, type))
			return -1; /* const void */
	}
	return -1;
}

/* Whether die's type is a floating-point base type (passed in xmm). */
int arg_is_float(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	Dwarf_Word enc;

	return dwarf_attr(die, DW_AT_type, &at) && dwarf_formref_die(&at, &type) &&
	       arg_peel_type(&type) == DW_TAG_base_type && dwarf_attr(&type, DW_AT_encoding, &at) &&
	       dwarf_formudata(&at, &enc) == 0 && enc == DW_ATE_float;
}

/* A member's byte offset, when it is a constant (not a bit-field, not an
 * expression). */
int arg_member_offset(Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Attribute at;

	if (dwarf_hasattr(m, DW_AT_bit_size) || dwarf_hasattr(m, DW_AT_data_bit_offset))
		return 0;
	if (!dwarf_attr(m, DW_AT_data_member_location, &at))
		return 0;
	return dwarf_formudata(&at, off) == 0;
}

/* The SysV classes of the (at most two) eightbytes of an aggregate. */
enum { EB_NONE = 0, EB_SSE = 1, EB_INT = 2 };

/* Marks in cls[] the eightbytes that type, at byte offset off of the
 * argument, covers: INTEGER for integers and pointers, SSE for float and
 * double, INTEGER winning where both meet. Returns 0, or -1 where this
 * model stops (x87 and complex types, unaligned members, past 16 bytes,
 * a declaration without members), which leaves the place unknown. */
static int mark_eightbytes(Dwarf_Die *type, Dwarf_Word off, int cls[2], int depth)
{
	Dwarf_Attribute at;
	Dwarf_Word enc;
	Dwarf_Die m, sub;

	if (depth > 8)
		return -1;
	int tag = arg_peel_type(type);
	if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
		if (dwarf_hasattr(type, DW_AT_declaration) || dwarf_child(type, &m) != 0)
			return dwarf_bytesize(type) == 0 ? 0 : -1;
		do {
			int mt = dwarf_tag(&m);
			if ((mt != DW_TAG_member && mt != DW_TAG_inheritance) ||
			    dwarf_hasattr(&m, DW_AT_declaration))
				continue; /* methods, types, static members */
			Dwarf_Word moff = 0;
			if (dwarf_attr(&m, DW_AT_data_bit_offset, &at)) {
				if (dwarf_formudata(&at, &moff) != 0)
					return -1;
				moff /= 8;
			} else if (dwarf_hasattr(&m, DW_AT_data_member_location) &&
				   !arg_member_offset(&m, &moff) &&
				   !dwarf_hasattr(&m, DW_AT_bit_size)) {
				return -1;
			}
			if (!dwarf_attr(&m, DW_AT_type, &at) || !dwarf_formref_die(&at, &sub))
				return -1;
			if (dwarf_hasattr(&m, DW_AT_bit_size)) {
				/* A bit-field's bits sit in an integer eightbyte. */
				if (off + moff >= 16)
					return -1;
				cls[(off + moff) / 8] = EB_INT;
				continue;
			}
			if (mark_eightbytes(&sub, off + moff, cls, depth + 1) < 0)
				return -1;
		} while (dwarf_siblingof(&m, &m) == 0);
		return 0;
	}
	if (tag == DW_TAG_array_type) {
		Dwarf_Word total, each;
		if (!dwarf_attr(type, DW_AT_type, &at) || !dwarf_formref_die(&at, &sub) ||
		    dwarf_aggregate_size(type, &total) != 0 ||
		    dwarf_aggregate_size(&sub, &each) != 0 || each == 0)
			return -1;
		for (Dwarf_Word i = 0; i < total / each; i++)
			if (mark_eightbytes(&sub, off + i * each, cls, depth + 1) < 0)
				return -1;
		return 0;
	}
	int bytes, cl;
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	    tag == DW_TAG_rvalue_reference_type) {
		bytes = 8, cl = EB_INT;
	} else if (tag == DW_TAG_enumeration_type) {
		bytes = dwarf_bytesize(type) > 0 ? dwarf_bytesize(type) : 4, cl = EB_INT;
	} else if (tag == DW_TAG_base_type && dwarf_attr(type, DW_AT_encoding, &at) &&
		   dwarf_formudata(&at, &enc) == 0) {
		bytes = dwarf_bytesize(type);
		if (enc == DW_ATE_float && (bytes == 4 || bytes == 8))
			cl = EB_SSE;
		else if (enc == DW_ATE_float || enc == DW_ATE_complex_float || bytes <= 0)
			return -1;
		else
			cl = EB_INT;
	} else {
		return -1;
	}
	if (off % (Dwarf_Word)bytes != 0 || off + (Dwarf_Word)bytes > 16)
		return -1; /* unaligned: the whole argument goes to memory */
	for (Dwarf_Word b = off / 8; b <= (off + (Dwarf_Word)bytes - 1) / 8; b++)
		if (cls[b] != EB_INT)
			cls[b] = cl;
	return 0;
}

/* Under SysV, how many integer registers an aggregate passed by value
 * takes: 0 in memory (over 16 bytes), else its INTEGER eightbytes.
 * -1 when not known. A C++ class is trusted to be passed by value only
 * when DWARF says so (DW_AT_calling_convention). */
static int sysv_aggregate_regs(Dwarf_Die *type, int lang)
{
	Dwarf_Word size;
	Dwarf_Attribute at;
	Dwarf_Word cc;
	int cls[2] = {EB_NONE, EB_NONE};

	if (lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_11 ||
	    lang == DW_LANG_C_plus_plus_14) {
		if (!dwarf_attr_integrate(type, DW_AT_calling_convention, &at) ||
		    dwarf_formudata(&at, &cc) != 0 || cc != DW_CC_pass_by_value)
			return -1;
	} else if (lang != DW_LANG_C89 && lang != DW_LANG_C99 && lang != DW_LANG_C11 &&
		   lang != DW_LANG_C) {
		return -1; /* Rust's own ABI passes aggregates its own way */
	}
	if (dwarf_aggregate_size(type, &size) != 0)
		return -1;
	if (size > 16)
		return 0;
	if (mark_eightbytes(type, 0, cls, 0) < 0)
		return -1;
	return (cls[0] == EB_INT) + (size > 8 && cls[1] == EB_INT);
}

/* Under Go's register ABI, how many integer registers a struct, string,
 * slice or interface takes: one per integer or pointer leaf, in order.
 * -1 when a leaf is a float, an array longer than one or anything else
 * this model leaves out. */
static int go_aggregate_regs(Dwarf_Die *type, int depth)
{
	Dwarf_Attribute at;
	Dwarf_Die m, sub;
	Dwarf_Word enc;
	int n = 0;

	if (depth > 8)
		return -1;
	int tag = arg_peel_type(type);
	if (tag == DW_TAG_pointer_type)
		return 1;
	if (tag == DW_TAG_base_type)
		return dwarf_attr(type, DW_AT_encoding, &at) && dwarf_formudata(&at, &enc) == 0 &&
			       enc != DW_ATE_float && enc != DW_ATE_complex_float &&
			       dwarf_bytesize(type) > 0 && dwarf_bytesize(type) <= 8
			   ? 1
			   : -1;
	if (tag != DW_TAG_structure_type)
		return -1;
	if (dwarf_child(type, &m) != 0)
		return dwarf_bytesize(type) == 0 ? 0 : -1;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (!dwarf_attr(&m, DW_AT_type, &at) || !dwarf_formref_die(&at, &sub))
			return -1;
		int k = go_aggregate_regs(&sub, depth + 1);
		if (k < 0)
			return -1;
		n += k;
	} while (dwarf_siblingof(&m, &m) == 0);
	return n;
}

/* Whether an aggregate is a string its function receives as a pointer and
 * a length in two registers: Go's string (str, len), Rust's &str
 * (data_ptr, length). */
static int is_string_pair(Dwarf_Die *type, int go, int lang)
{
	const char *name = dwarf_diename(type);
	const char *want[2] = {go ? "str" : "data_ptr", go ? "len" : "length"};
	Dwarf_Die m;
	Dwarf_Word off;
	int seen = 0;

	if (!name || dwarf_bytesize(type) != 16 || dwarf_child(type, &m) != 0)
		return 0;
	if (go ? strcmp(name, "string") != 0
	       : lang != DW_LANG_Rust ||
		     (strcmp(name, "&str") != 0 && strcmp(name, "&mut str") != 0))
		return 0;
	do {
		const char *mn = dwarf_diename(&m);
		if (dwarf_tag(&m) != DW_TAG_member || !mn || !arg_member_offset(&m, &off))
			continue;
		for (int i = 0; i < 2; i++)
			if (strcmp(mn, want[i]) == 0 && off == (Dwarf_Word)(8 * i))
				seen |= 1 << i;
	} while (dwarf_siblingof(&m, &m) == 0);
	return seen == 3;
}

/* Rust's &[T] and &mut [T]: a pointer and a length, two registers. */
static int is_rust_slice(Dwarf_Die *type, int lang)
{
	const char *name = dwarf_diename(type);

	return lang == DW_LANG_Rust && name && dwarf_bytesize(type) == 16 &&
	       (strncmp(name, "&[", 2) == 0 || strncmp(name, "&mut [", 6) == 0);
}

/* Where DWARF says a parameter is at the function's entry. */
enum entry_place {
	PLACE_ABI,  /* DWARF does not say (a stack slot at -O0): the ABI's place */
	PLACE_REGS, /* in *reg (and a second half in *reg2, or -1) */
	PLACE_GONE, /* nowhere: the compiler dropped it or did not keep it */
};

/* A DWARF register number as an enum x86_gpr, -1 for the others (xmm). */
static int gpr_of_dwarf(unsigned n)
{
	static const int8_t map[16] = {X86_RAX, X86_RDX, X86_RCX, X86_RBX, X86_RSI, X86_RDI,
				       X86_RBP, X86_RSP, X86_R8,  X86_R9,  X86_R10, X86_R11,
				       X86_R12, X86_R13, X86_R14, X86_R15};
	return n < 16 ? map[n] : -1;
}

/* The register one operation names (DW_OP_reg0..31, DW_OP_regx), or -1. */
static int op_reg(const Dwarf_Op *op)
{
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31)
		return (int)(op->atom - DW_OP_reg0);
	if (op->atom == DW_OP_regx)
		return (int)op->number;
	return -1;
}

/* Reads param's DW_AT_location at entry (the function's first byte, where
 * the probe fires): a register, a value in two 8-byte pieces (a string's
 * pointer and length), nothing there, or something only the ABI can
 * place. A place DWARF states beats the ABI's: LLVM drops and reorders
 * the arguments of internal functions without renaming them. */
static enum entry_place entry_place(Dwarf_Die *param, Dwarf_Addr entry, int llvm_internal, int *reg,
				    int *reg2)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t len;

	*reg = *reg2 = -1;
	if (!dwarf_attr(param, DW_AT_location, &at))
		return llvm_internal ? PLACE_GONE : PLACE_ABI;
	int n = dwarf_getlocation_addr(&at, entry, &ops, &len, 1);
	if (n < 0)
		return PLACE_ABI;
	if (n == 0 || len == 0)
		return PLACE_GONE;
	if (len == 1 && op_reg(&ops[0]) >= 0) {
		*reg = gpr_of_dwarf((unsigned)op_reg(&ops[0]));
		return *reg >= 0 ? PLACE_REGS : PLACE_ABI; /* an xmm: as the ABI says */
	}
	/* [reg] piece 8 [reg] piece 8: an empty piece is optimized out. */
	int half[2] = {-1, -1}, k = 0;
	for (size_t i = 0; i < len && k < 2; i++) {
		int r = op_reg(&ops[i]);
		if (r >= 0 && i + 1 < len && ops[i + 1].atom == DW_OP_piece &&
		    ops[i + 1].number == 8)
			half[k++] = gpr_of_dwarf((unsigned)r), i++;
		else if (ops[i].atom == DW_OP_piece && ops[i].number == 8)
			half[k++] = -1;
		else
			return PLACE_ABI;
	}
	if (k != 2 || len != (size_t)(half[0] >= 0) + (half[1] >= 0) + 2)
		return PLACE_ABI;
	*reg = half[0], *reg2 = half[1];
	return PLACE_REGS;
}

void arg_assign_init(struct arg_assign *ra, Dwarf_Die *sub, uint64_t vaddr, int go, int first)
{
	Dwarf_Attribute at;
	Dwarf_Die cu;
	bool external = false;

	memset(ra, 0, sizeof(*ra));
	ra->next = first;
	ra->nregs = go ? TRACE_GO_REGS : 6;
	ra->certain = 1;
	ra->go = go;
	ra->order = go ? go_regs : arg_sysv_regs;
	ra->lang = -1;
	if (dwarf_lowpc(sub, &ra->entry) != 0)
		ra->entry = vaddr;
	if (!dwarf_diecu(sub, &cu, NULL, NULL))
		return;
	ra->lang = dwarf_srclang(&cu);
	const char *producer = dwarf_attr(&cu, DW_AT_producer, &at) ? dwarf_formstring(&at) : NULL;
	if (dwarf_attr_integrate(sub, DW_AT_external, &at))
		dwarf_formflag(&at, &external);
	ra->llvm_internal =
	    producer && !external && (strstr(producer, "clang") || strstr(producer, "rustc"));
}

uint32_t arg_place(struct arg_assign *ra, Dwarf_Die *param, uint32_t kind, int *reg_out,
		   int *len_reg_out, int *why_out)
{
	int reg = -1, len_reg = -1, why = TRACE_WHY_NONE, pair = 0;
	Dwarf_Attribute at;
	Dwarf_Die type;

	if (kind == TRACE_ARG_UNKNOWN && arg_is_float(param)) {
		why = TRACE_WHY_FLOAT;
	} else if (kind == TRACE_ARG_UNKNOWN) {
		int regs = -1;
		if (dwarf_attr_integrate(param, DW_AT_type, &at) && dwarf_formref_die(&at, &type)) {
			int tag = arg_peel_type(&type);
			Dwarf_Word enc;
			if (tag == DW_TAG_base_type) {
				/* __int128 in two registers, long double in memory */
				why = TRACE_WHY_WIDE;
				if (!ra->go && dwarf_bytesize(&type) == 16 &&
				    dwarf_attr(&type, DW_AT_encoding, &at) &&
				    dwarf_formudata(&at, &enc) == 0)
					regs = enc == DW_ATE_signed || enc == DW_ATE_unsigned ? 2
					       : enc == DW_ATE_float			      ? 0
											      : -1;
			}
			pair = is_string_pair(&type, ra->go, ra->lang);
			if (pair || is_rust_slice(&type, ra->lang))
				regs = 2;
			else if (ra->go)
				regs = go_aggregate_regs(&type, 0);
			else if (tag != DW_TAG_base_type)
				regs = sysv_aggregate_regs(&type, ra->lang);
		}
		if (why == TRACE_WHY_NONE)
			why = TRACE_WHY_AGGREGATE;
		if (regs < 0 || !ra->certain) {
			ra->certain = 0;
		} else if (ra->next + regs <= ra->nregs) {
			if (pair) {
				kind = TRACE_ARG_STR;
				reg = ra->order[ra->next], len_reg = ra->order[ra->next + 1];
			}
			ra->next += regs;
		}
		/* One that does not fit goes to the stack whole, and later
		 * ones still take the registers left (both ABIs). */
	} else if (!ra->certain) {
		why = TRACE_WHY_PLACE;
	} else if (ra->next < ra->nregs) {
		reg = ra->order[ra->next++];
	} else {
		why = TRACE_WHY_STACK;
	}
	/* DWARF's place, where it states one, over the ABI's. */
	int dreg, dreg2;
	switch (entry_place(param, ra->entry, ra->llvm_internal, &dreg, &dreg2)) {
	case PLACE_ABI:
		break;
	case PLACE_GONE:
		reg = len_reg = -1;
		if (why != TRACE_WHY_FLOAT)
			why = TRACE_WHY_OPTIMIZED;
		break;
	case PLACE_REGS:
		if (pair) {
			kind = TRACE_ARG_STR;
			reg = dreg, len_reg = dreg2;
			if (reg < 0 || len_reg < 0)
				why = TRACE_WHY_OPTIMIZED, reg = len_reg = -1;
		} else if (dreg2 < 0 && kind != TRACE_ARG_UNKNOWN && dreg >= 0) {
			reg = dreg;
		}
		break;
	}
	*reg_out = reg;
	*len_reg_out = len_reg;
	*why_out = reg < 0 ? why : TRACE_WHY_NONE;
	return reg < 0 ? TRACE_ARG_UNKNOWN : kind;
}

/* Go's interfaces: runtime.iface (tab, data) and runtime.eface (_type,
 * data). */
static int is_go_interface(Dwarf_Die *type)
{
	const char *name = dwarf_diename(type);

	return name && (strcmp(name, "runtime.iface") == 0 || strcmp(name, "runtime.eface") == 0) &&
	       dwarf_bytesize(type) == 16;
}

uint32_t arg_place_go_result(struct arg_assign *ra, Dwarf_Die *param, uint32_t kind, int *reg,
			     int *reg2, int *iface)
{
	Dwarf_Attribute at;
	Dwarf_Die type;
	int regs = 1;

	*reg = *reg2 = -1;
	*iface = 0;
	if (kind == TRACE_ARG_UNKNOWN) {
		regs = -1;
		if (!arg_is_float(param) && dwarf_attr_integrate(param, DW_AT_type, &at) &&
		    dwarf_formref_die(&at, &type)) {
			arg_peel_type(&type);
			if (is_string_pair(&type, 1, -1)) {
				kind = TRACE_ARG_STR;
				regs = 2;
			} else if (is_go_interface(&type)) {
				*iface = 1;
				regs = 2;
			} else {
				regs = go_aggregate_regs(&type, 0);
			}
		}
	}
	/* One that does not fit is returned in memory; later ones still take
	 * the registers left. */
	if (regs < 0 || ra->next + regs > ra->nregs) {
		if (regs > 0)
			ra->certain = 0;
		return TRACE_ARG_UNKNOWN;
	}
	if (regs >= 1 && (kind != TRACE_ARG_UNKNOWN || *iface))
		*reg = ra->order[ra->next];
	if (regs == 2 && (kind == TRACE_ARG_STR || *iface))
		*reg2 = ra->order[ra->next + 1];
	ra->next += regs;
	return *reg >= 0 ? kind : TRACE_ARG_UNKNOWN;
}

uint32_t arg_sysv_mask(void)
{
	uint32_t m = 0;

	for (int i = 0; i < 6; i++)
		m |= 1u << arg_sysv_regs[i];
	return m;
}
