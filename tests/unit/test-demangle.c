/*
 * Unit tests of demangling: C++, Rust legacy names with
 * their hash dropped and $-escapes decoded, Rust v0 names (the vectors
 * come from rustc-demangle's own tests), and names that must be left
 * alone: plain C, malformed, hostile (exponential backreferences). And
 * function names as people write them: no parameter list or qualifiers,
 * operators and templates intact, clone suffixes kept, fragments known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbols/demangle.h"

static void check(const char *mangled, const char *want)
{
	char *got = demangle_symbol(mangled);

	if (!want) {
		if (got)
			fail_msg("%s demangled to %s, expected nothing", mangled, got);
		return;
	}
	if (!got)
		fail_msg("%s did not demangle, expected %s", mangled, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_cxx(void **state)
{
	check("_ZN2ns3fooEi", "ns::foo(int)");
	check("_ZNK3MapI10StringName3RefE3getEv", "Map<StringName, Ref>::get() const");
	check("_ZSt9terminatev", "std::terminate()");
	check("_Z3foov.cold", "foo() [clone .cold]");
	check("_ZN3foo3barE", "foo::bar"); /* ends in E but has no Rust hash */
	check("_Z", NULL);
	check("_Zxyz", NULL);
}

static void test_rust_legacy(void **state)
{
	check("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	check("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
	      "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
	      "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
	check("_ZN3foo3bar17h05af221e174051e9E.llvm.1234ABCD", "foo::bar");
	check("_ZN3foo3bar17h05af221e174051e9E.cold", "foo::bar.cold");
	/* A length running past the end is not a name. */
	check("_ZN4core17h0123456789abcdeE", NULL);
}

static void test_rust_v0(void **state)
{
	check("_RNvC6_123foo3bar", "123foo::bar");
	check("_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_", "cc::spawn::{closure#0}::{closure#0}");
	check("_RNCINkXs25_NgCsbmNqQUJIY6D_4core5sliceINyB9_4IterhENuNgNoBb_4iter8iterator8Iterato"
	      "r9rpositionNCNgNpB9_6memchr7memrchrs_0E0Bb_",
	      "<core::slice::Iter<u8> as core::iter::iterator::Iterator>::rposition::<core::slice::"
	      "memchr::memrchr::{closure#1}>::{closure#0}");
	check("_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1io"
	      "pQbuBiw2_3std",
	      "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>");
	check("_RMC0INtC8arrayvec8ArrayVechKj7b_E", "<arrayvec::ArrayVec<u8, 123>>");
	check("_RMCs4fqI2P2rA04_13const_genericINtB0_6SignedKanb_E",
	      "<const_generic::Signed<-11>>");
	check("_RMCs4fqI2P2rA04_13const_genericINtB0_4BoolKb1_E", "<const_generic::Bool<true>>");
	check("_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKca_E", "<const_generic::Char<'\\n'>>");
	check("_RNvNvMCs4fqI2P2rA04_13const_genericINtB4_3FooKpE3foo3FOO",
	      "<const_generic::Foo<_>>::foo::FOO");
	check("_RNvC9backtrace3foo.llvm.A5310EB9", "backtrace::foo");
	check("_RNvNtNtNtNtCs92dm3009vxr_4rand4rngs7adapter9reseeding4fork23FORK_HANDLER_"
	      "REGISTERED.0.0",
	      "rand::rngs::adapter::reseeding::fork::FORK_HANDLER_REGISTERED.0.0");
}

static void test_left_alone(void **state)
{
	check("main", NULL);
	check("qsort", NULL);
	check("_R", NULL);
	check("_RNvC", NULL);
	check("_RB_", NULL); /* a backreference to itself */
	check("_RIB_E", NULL);
	check("_RNvCu5abcde3bar", NULL); /* punycode: not decoded */
	check("_RNvC3foo3barX", NULL);	 /* trailing garbage */
}

static void test_hostile(void **state)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char sym[256] = "_RMC0";
	char *p = sym + strlen(sym);

	/* Nested tuples whose second halves are backreferences to the first:
	 * each level doubles the output, so 30 levels would print 2^30
	 * underscores. The output cap turns that into "not demangled". */
	for (int i = 0; i < 30; i++)
		*p++ = 'T';
	*p++ = 'p';
	for (int k = 30 + 2; k >= 3; k--)
		p += snprintf(p, sizeof(sym) - (size_t)(p - sym), "B%c_E", digits[k]);
	check(sym, NULL);

	/* Six levels, from rustc-demangle's tests, still fit. */
	check("_RMC0TTTTTTpB8_EB7_EB6_EB5_EB4_EB3_E",
	      "<((((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _)))), "
	      "((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _))))), "
	      "(((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _)))), "
	      "((((_, _), (_, _)), ((_, _), (_, _))), (((_, _), (_, _)), ((_, _), (_, _))))))>");
}

static void check_function(const char *sym, const char *want)
{
	char *got = demangle_function(sym);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_function_names(void **state)
{
	(void)state;
	check_function("_ZN4shop8fill_mapEll", "shop::fill_map");
	check_function("_ZNK4shop4Cart5totalEv", "shop::Cart::total");
	check_function("_ZNSt6vectorIiSaIiEE9push_backERKi",
		       "std::vector<int, std::allocator<int> >::push_back");
	check_function("_ZN3FooclEi", "Foo::operator()");
	check_function("_ZNKSt8functionIFviEEclEi", "std::function<void (int)>::operator()");
	check_function("_ZN3hot6engine4rank17h0123456789abcdefE", "hot::engine::rank");
	check_function("_Z10sort_batchPii.constprop.0", "sort_batch.constprop.0");
	check_function("sort_batch.constprop.0", "sort_batch.constprop.0");
	check_function("main", "main");
	check_function("_ZN4shop8make_keyB5cxx11Em", "shop::make_key");
	assert_true(demangle_is_fragment("parse_value.cold"));
	assert_true(demangle_is_fragment("_Z11parse_valuePKc.cold"));
	assert_true(demangle_is_fragment("heavy.part.0"));
	assert_false(demangle_is_fragment("sort_batch.constprop.0"));
	assert_false(demangle_is_fragment("coldstart"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cxx),	    cmocka_unit_test(test_rust_legacy),
	    cmocka_unit_test(test_rust_v0), cmocka_unit_test(test_left_alone),
	    cmocka_unit_test(test_hostile), cmocka_unit_test(test_function_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
