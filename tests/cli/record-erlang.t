#!/bin/bash
# JIT code: an Erlang node started with +JPperf true writes
# /tmp/perf-PID.map; recce names the Erlang functions from it.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
command -v erl >/dev/null && command -v erlc >/dev/null ||
	skip_all "erl and erlc are not installed (apt-get install erlang-base)"
erl -noshell +JPperf true -eval 'halt(0).' >/dev/null 2>&1 ||
	skip_all "this Erlang has no JIT perf map support (+JPperf)"

mkdir "$T/ebin"
ok "fib.erl compiles" erlc -o "$T/ebin" tests/targets/erlang/fib.erl

spawn "$T/erl.out" erl +JPperf true -noshell -pa "$T/ebin" -eval 'fib:loop(0)' -s init stop
BEAM=$PID
MAP=/tmp/perf-$BEAM.map
# The BEAM leaves its map behind when it exits.
remove_at_exit "$MAP"
# The module is loaded (and its JIT code listed) at its first call.
if ! wait_for 15 grep -qs 'fib:fib/1' "$MAP"; then
	fail "the BEAM (PID $BEAM) lists fib:fib/1 in $MAP" "$(cat "$T/erl.out")"
	exit
fi
is "$(cat "/proc/$BEAM/comm")" beam.smp "PID $BEAM is the BEAM itself"

P="$T/erl.pb.gz"
run "$RECCE" record -p "$BEAM" -d 2 -o "$P"
is "$RC" 0 "record -p BEAM -d 2 exits 0" || show_run
run "$RECCE" report --folded --value samples "$P"
is "$RC" 0 "report --folded exits 0" || show_run
FOLDED=$(cat "$OUT")
TOTAL=$(folded_total "$FOLDED")
FIB=$(folded_count "$FOLDED" '(^|;)[$]?fib:fib/1(;|$)')
like "$FOLDED" '(^|;)[$]?fib:fib/1(;| )' "Erlang's fib:fib/1 is named in the stacks"
cmp_ok "$FIB" '>' "$TOTAL * 0.5" "and it is in most samples ($FIB of $TOTAL)"
diag "the heaviest stack:" "$(folded_top "$FOLDED")"

run "$RECCE" report "$P"
TOP=$(table_rows "$(cat "$OUT")" | head -n 1)
like "$TOP" 'fib:fib/1' "the default report's top row is fib:fib/1"

# recce trace cannot probe JIT code (it is in no file): a pattern that
# names an Erlang function says so rather than only "matches no function".
run "$RECCE" trace -p "$BEAM" 'fib:fib*' --count 1
is "$RC" 1 "trace of a JIT function exits 1"
like "$(cat "$ERR")" "'fib:fib\\*' matches no function in process $BEAM" "it matches no function" ||
	show_run
like "$(cat "$ERR")" "it names JIT code of process $BEAM \\([\$]?fib:fib/1, in /tmp/perf-$BEAM.map\\)" \
	"and it says the name is JIT code, listed in the perf map"

done_testing
