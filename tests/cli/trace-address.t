#!/bin/bash
# Code without symbols is traced by where it is: the name a report gives
# a function only .eh_frame knows ("hot-stripped!0xSTART-0xEND") and an
# object with a file address ("hot-stripped:0xSTART", as perf probe and
# bpftrace take it) are trace patterns. An address inside a function is
# refused with that function's start as the nearest name.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

A=$(nm "$TARGETS/hot" | awk '$3 == "burn_cpu" { print $1 }' | sed 's/^0*//')
strip -o "$T/hot-stripped" "$TARGETS/hot"
spawn "$T/hot.out" "$T/hot-stripped"
TGT=$PID

# What the report names, from a profile of the stripped program.
run "$RECCE" record -p "$TGT" -d 1 -o "$T/hot.pb.gz"
run "$RECCE" report "$T/hot.pb.gz" -n 1
NAME=$(grep -o -m1 'hot-stripped!0x[0-9a-f]*-0x[0-9a-f]*' "$OUT")
like "$NAME" "^hot-stripped!0x$A-0x" "the report names burn_cpu by its .eh_frame range" ||
	diag "$(cat "$OUT")"

run "$RECCE" trace -p "$TGT" "$NAME" --count 2 --time 60
is "$RC" 0 "trace of the report's name exits 0" || show_run
is "$(grep -c "^[0-9:.]* <$TGT> hot-stripped:0x$A(" "$OUT")" 2 "and shows 2 calls, named by the address"

run "$RECCE" trace -p "$TGT" "hot-stripped:0x$A" --return --count 2 --time 60
is "$RC" 0 "trace of OBJECT:0xADDRESS --return exits 0" || show_run
is "$(grep -c "hot-stripped:0x$A --> " "$OUT")" 2 "its returns are found from the .eh_frame entry's size"

INSIDE=$(printf '%x' $((16#$A + 4)))
run "$RECCE" trace -p "$TGT" "hot-stripped:0x$INSIDE" --count 1 --time 60
is "$RC" 1 "an address inside a function: exit 1"
like "$(cat "$ERR")" "'hot-stripped:0x$INSIDE' matches no function" "saying it matches none"
like "$(cat "$ERR")" "the nearest names are: hot-stripped:0x$A$" "and where the function holding it starts"

# Its functions' names are gone: trace says why, and what to do.
run "$RECCE" trace -p "$TGT" burn_cpu --count 1
is "$RC" 1 "a function of a stripped program by its name: exit 1"
like "$(cat "$ERR")" "recce: $T/hot-stripped keeps no symbol table \(it was stripped, .*\): only the functions it exports are found by name\. Its debug symbols name the others .*trace one by the name recce record gives it \(hot-stripped!0xSTART-0xEND\) or by its address \(hot-stripped:0xSTART\)\$" \
	"and says the program keeps no symbol table, and how to trace its functions"
run "$RECCE" trace -p "$TGT" "0x$A" --count 1
is "$RC" 2 "an address without its object: usage error"
like "$(cat "$ERR")" "OBJECT:0xADDRESS" "naming the form to use"
kill_quietly "$TGT"

# With symbols, the address names the function.
spawn "$T/sym.out" "$TARGETS/hot"
SYM=$PID
run "$RECCE" trace -p "$SYM" "hot:0x$A" --count 1 --time 60
is "$RC" 0 "trace of an address in a binary with symbols exits 0" || show_run
like "$(cat "$OUT")" "<$SYM> hot:burn_cpu\\(" "and shows the function by its name"
run "$RECCE" trace -p "$SYM" burn_cpuu --count 1
is "$RC" 1 "a name it lacks, in a program with symbols: exit 1"
unlike "$(cat "$ERR")" 'symbol table' "and no word of a symbol table"
kill_quietly "$SYM"
done_testing
