#!/bin/bash
# `recce trace -p PID`: exact call counts, argument and return values,
# --if, --count and --limit with their stop lines, the target unaffected
# afterwards (also after kill -9 of recce), a libc probe confined to the
# target, and bad input.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

# calls N go: N calls of add_pair(i, 2i) and greet("client-i") once
# recce traces (run_go sends the SIGUSR1 it waits for), then it exits.
spawn_ready "$T/c1.out" "$TARGETS/calls" 20 go
C=$PID
run_go "$C" trace -p "$C" add_pair --return --count 0 --time 60
is "$RC" 0 "trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 20 "exactly the 20 calls are traced"
is "$(grep -c 'calls:add_pair/2 --> ' "$OUT")" 20 "and their 20 returns"
like "$(cat "$OUT")" '<[0-9]+> calls:add_pair\(a=7, b=14\)$' "arguments are named and right"
like "$(cat "$OUT")" 'calls:add_pair/2 --> 21  \([0-9.]+ [mun]?s\)$' "return value 7+14=21 with a duration"
like "$(cat "$ERR")" '^recce: stopped after 20 events: the target exited; all probes removed$' "the stop line says the target exited"

spawn_ready "$T/c2.out" "$TARGETS/calls" 20 go
run_go "$PID" trace -p "$PID" greet add_pair --if 'name == "client-7" || a == 3' --count 0
is "$(grep -c '(' "$OUT")" 2 "--if selects exactly the matching calls" || show_run
like "$(cat "$OUT")" 'calls:greet\(name="client-7"\)' "the string argument is read from the target"
like "$(cat "$OUT")" 'calls:add_pair\(a=3, b=6\)' "and the integer condition picks a=3"

spawn_ready "$T/c3.out" "$TARGETS/calls" 50 go
run_go "$PID" trace -p "$PID" add_pair --return --count 4
is "$(grep -c 'add_pair(' "$OUT")" 4 "--count 4 shows 4 calls" || show_run
is "$(grep -c 'add_pair/2' "$OUT")" 4 "and their returns"
like "$(cat "$ERR")" '^recce: stopped after 4 events \(--count 4\); all probes removed$' "with the stop line"

spawn_ready "$T/c4.out" "$TARGETS/calls" 50 go
run_go "$PID" trace -p "$PID" add_pair --count 0 --limit 5/10000
is "$(grep -c 'add_pair(' "$OUT")" 5 "--limit 5/10000 lets 5 events through" || show_run
like "$(cat "$ERR")" 'stopped after 5 events: circuit breaker tripped \(--limit 5/10000' "then trips, and says so"
like "$(cat "$ERR")" 'raise the limit \(--limit 50/10000\) or turn it off \(--limit 0\)' "and says how to raise it"

# The target is unaffected: the same checksums as an untraced run, after a
# trace stopped by --count and after recce was killed with SIGKILL.
run "$TARGETS/calls" 30 10 3
WANT=$(grep checksum "$OUT")
# Rounds without end: it is still there when its code is compared, however
# long the attach and the kill take on a busy machine; it is stopped once
# it has printed the rounds compared.
spawn_ready "$T/c5.out" "$TARGETS/calls" 30 go 0
C5=$PID
spawn_recce "$T/k.out" "$T/k.err" trace -p "$C5" add_pair greet --count 0 --time 60
REC=$PID
wait_for 60 grep -q '^recce: tracing' "$T/k.err" || diag "recce never started tracing"
kill -USR1 "$C5"
wait_for 60 grep -q 'add_pair(' "$T/k.out"
kill -9 "$REC"
wait_exit 5 "$REC"
cmp_ok "$(grep -c 'add_pair(' "$T/k.out")" '>' 0 "recce traced calls before SIGKILL"
ok "the target survives recce's SIGKILL" kill -0 "$C5"
STATE=$(awk '{ print $3 }' "/proc/$C5/stat" 2>/dev/null)
like "$STATE" '^[RS]$' "and is not left stopped (state $STATE)"
# recce's probes went with its file descriptors: no breakpoint is left in
# the target's code, which equals its files byte for byte.
run python3 tests/cli/code-bytes.py "$C5"
is "$RC" 0 "no breakpoint is left in the target's code after recce's SIGKILL" || show_run
ROUNDS=$(grep -c checksum "$T/c5.out")
wait_for 60 lines_at_least "$T/c5.out" checksum "$((ROUNDS > 2 ? ROUNDS + 1 : 3))" ||
	fail "the target goes on after recce's SIGKILL" "no round after the $ROUNDS it had made"
kill_quietly "$C5"
is "$(grep checksum "$T/c5.out" | head -3)" "$WANT" "its output is the same as untraced"


# libc's malloc, probed in one process, does not fire for another.
spawn "$T/m1.out" "$TARGETS/calls" 200 0 0
M1=$PID
spawn "$T/m2.out" "$TARGETS/calls" 200 0 0
M2=$PID
wait_for 60 grep -q 'checksum' "$T/m1.out"
wait_for 60 grep -q 'checksum' "$T/m2.out"
run "$RECCE" trace -p "$M1" 'libc:malloc' --count 0 --time 1 --limit 0
cmp_ok "$(grep -c 'libc.so.6:malloc(' "$OUT")" '>' 0 "malloc in libc is traced" || show_run
is "$(grep 'malloc(' "$OUT" | grep -vc "<$M1>")" 0 "only for the target's threads, not for $M2"
kill "$M1" "$M2"

# Bad input.
spawn_ready "$T/b.out" "$TARGETS/calls" 5 go
run "$RECCE" trace -p "$PID" add_piar
is "$RC" 1 "a pattern that matches nothing exits 1"
like "$(cat "$ERR")" "'add_piar' matches no function" "and says so"
like "$(cat "$ERR")" 'nearest names are:.*add_pair' "and lists the nearest names"
run "$RECCE" trace -p "$PID" add_pair --if 'a > 3 &&'
is "$RC" 2 "an --if that does not parse exits 2"
like "$(cat "$ERR")" "at column 9:" "and points at the column (the end)"
run "$RECCE" trace -p "$(unused_pid)" add_pair
is "$RC" 1 "an unknown PID exits 1"
like "$(cat "$ERR")" 'no process with PID' "and says so"
run "$RECCE" trace -p "$PID" 'libc:*' --max-probes 10
is "$RC" 1 "a pattern over --max-probes is refused"
like "$(cat "$ERR")" 'more than --max-probes 10' "with a message naming the option"

done_testing
