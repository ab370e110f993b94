#!/bin/bash
# `recce trace` speaks C++ and Rust: patterns match names as people write
# them (shop::fill_map, 'hot::engine::*', or just fill_map, as gdb's
# break finds it), events print those names whole, suggestions rank by
# them, a compiler's .cold fragment is never probed as a function, and a
# .constprop clone is found under its function's name. The target is
# built at -O2, where the compiler splits and clones.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/shop"

# The compiler did split and clone (else the tests below prove nothing).
NM=$(nm "$TARGETS/shop")
like "$NM" '_ZN4shop8fill_mapEl\.cold' "the target has a .cold fragment of shop::fill_map"
like "$NM" 'sort_batch.*\.constprop\.0' "and a .constprop clone of shop::sort_batch"

# Rounds until told to stop: it lives through every trace below, however
# slow the machine. Its own copy of the program: a uretprobe (below) is
# armed in every process where a breakpoint at its function fires, the
# other tests' targets included.
cp "$TARGETS/shop" "$T/shop"
spawn_ready "$T/shop.out" "$T/shop" 0 go
S=$PID
kill -USR1 "$S"

run "$RECCE" trace -p "$S" 'shop::fill_map' --return --count 4
is "$RC" 0 "'shop::fill_map' is found" || show_run
like "$(head -1 "$OUT")" '<[0-9]+> shop:shop::fill_map\(i=[0-9]+\)$' \
	"events print the demangled name and the arguments of a function split hot and cold"
like "$(sed -n 2p "$OUT")" 'shop:shop::fill_map/1 --> [0-9]+  \(' "and its return value"
like "$(cat "$ERR")" 'tracing 1 function in' "one function: the .cold fragment is not one"

run "$RECCE" trace -p "$S" fill_map --count 1
like "$(cat "$OUT")" 'shop:shop::fill_map\(' "a bare 'fill_map' finds shop::fill_map" || show_run

run "$RECCE" trace -p "$S" 'shop::fill_map*' --count 1
like "$(cat "$ERR")" 'tracing 1 function in' "a glob does not take the .cold fragment" || show_run

run "$RECCE" trace -p "$S" 'hot::engine::*' --return --count 2
like "$(head -1 "$OUT")" 'shop:hot::engine::rank\(x=[0-9]+\)$' \
	"a Rust path glob finds hot::engine::rank, hash dropped" || show_run

run "$RECCE" trace -p "$S" 'shop::Cart::total' --return --count 2
like "$(sed -n 2p "$OUT")" 'shop::Cart::total/1 --> 36  \(' "a const method, by its qualified name" ||
	show_run

run "$RECCE" trace -p "$S" sort_batch --count 1
like "$(cat "$OUT")" 'shop:shop::sort_batch\.constprop\.0\(' \
	"'sort_batch' finds its .constprop clone, named as the clone" || show_run

# Values under the SysV ABI: a std::string comes back in memory, through a
# hidden pointer in rdi, so the first argument is in rsi; at the return
# the probe reads the object, and for a string the text it points to,
# before the caller can change them. A double comes back in xmm0, which a
# uprobe cannot read.
run "$RECCE" trace -p "$S" make_key --return --count 2
like "$(head -1 "$OUT")" 'shop::make_key\(i=[0-9]+\)$' \
	"an argument after the hidden return pointer is the argument" || show_run
I=$(head -1 "$OUT" | sed -n 's/.*(i=\([0-9]*\))$/\1/p')
# The counter grows with every 2 ms the target runs (a busy machine makes
# the test, and so the target, run longer); a stack address is above
# 0x7f0000000000.
cmp_ok "$I" '<' 100000000 "its value is the loop counter ($I), not a stack address"
like "$(sed -n 2p "$OUT")" "shop::make_key/1 --> \"key-$I-of-the-shop\"  \\(" \
	"the return shows the string that call built, read from the heap" || show_run
run "$RECCE" trace -p "$S" short_key --return --count 2
I=$(head -1 "$OUT" | sed -n 's/.*(i=\([0-9]*\))$/\1/p')
like "$(sed -n 2p "$OUT")" "shop::short_key/1 --> \"k$((I % 10))\"  \\(" \
	"and a short one, whose text lives inside the object" || show_run
run "$RECCE" trace -p "$S" 'shop::quote' --return --count 2 -o "$T/quote.trc"
is "$RC" 0 "a struct returned in memory is traced to a file" || show_run
run "$RECCE" replay "$T/quote.trc"
I=$(head -1 "$OUT" | sed -n 's/.*(i=\([0-9]*\))$/\1/p')
WANT="{id=$I, price=$(awk -v i="$I" 'BEGIN { printf "%.15g", i / 4 }'), qty=$((I % 9)), \
open=$([ $((I % 2)) = 0 ] && echo true || echo false)}"
is "$(sed -n 2p "$OUT" | sed 's/.* --> //; s/  (.*//')" "$WANT" \
	"its members by name and type, the double exact, kept in the trace file" || show_run
run "$RECCE" replay "$T/quote.trc" --format json
like "$(sed -n 2p "$OUT")" '"ret_object":"0x[0-9a-f]+","ret_text":"\{id=[0-9]+, price=' \
	"JSON gives the object's address and its text" || show_run
RECCE_RETURN_URETPROBE=1 run "$RECCE" trace -p "$S" make_key --return --count 2
I=$(head -1 "$OUT" | sed -n 's/.*(i=\([0-9]*\))$/\1/p')
like "$(sed -n 2p "$OUT")" "make_key/1 --> \"key-$I-of-the-shop\"  \\(" \
	"a uretprobe reads the object the same way" || show_run
# A call already inside when the probes went in has its return "(unwound)":
# the first return seen whole is the one to look at.
RECCE_NO_BPF=1 run "$RECCE" trace -p "$S" 'shop::quote' --return --count 4
like "$(grep -F -- ' --> ' "$OUT" | grep -v -F '(unwound)' | head -n 1)" \
	'shop::quote/1 --> \(object at 0x[0-9a-f]+\)  \(' \
	"perf uprobe events cannot read it: the return says where it was built" || show_run
run "$RECCE" trace -p "$S" 'shop::price' --return --count 2
like "$(sed -n 2p "$OUT")" 'shop::price/1 --> \(not readable here\)  \(' \
	"a double return is labelled not readable, never a wrong value" || show_run

run "$RECCE" trace -p "$S" fil_map --count 1
is "$RC" 1 "a name that matches nothing exits 1"
like "$(cat "$ERR")" 'the nearest names are: shop::fill_map,' \
	"and the nearest name suggested is shop::fill_map" || show_run

kill -USR1 "$S"
wait_exit 60 "$S" || fail "the target finishes" "still running"
is "$WAIT_RC" 0 "the target exits 0 after being traced thirteen times"

done_testing
