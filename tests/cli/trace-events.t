#!/bin/bash
# `recce trace` on kernels without uprobe_multi links: RECCE_NO_BPF=1 makes
# recce use its other mechanism, one perf uprobe event per probe, thread
# and CPU, and the core tests of trace-basic.t, trace-more.t and
# trace-unwind.t must hold for it too. First, that each run says which
# mechanism it used.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls" "$TARGETS/spinner"

spawn_ready "$T/c1.out" "$TARGETS/calls" 5 go
run_go "$PID" trace -p "$PID" add_pair --count 0 --time 60
is "$RC" 0 "trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 5 "the 5 calls are traced"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with BPF links;" \
	"with BPF links where the kernel has them"

# Callers and stacks come through the same links (the record, with its
# call chain, fits the BPF stack).
spawn_ready "$T/c3.out" "$TARGETS/calls" 5 go
run_go "$PID" trace -p "$PID" add_pair --stack --count 0 --time 60
is "$(grep -c '^    at make_calls ' "$OUT")" 5 "--stack names each call's caller"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with BPF links;" \
	"and still uses BPF links"

spawn_ready "$T/c2.out" "$TARGETS/calls" 5 go
RECCE_NO_BPF=1 run_go "$PID" trace -p "$PID" add_pair --count 0 --time 60
is "$RC" 0 "RECCE_NO_BPF=1 trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 5 "the 5 calls are traced"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with perf uprobe events;" \
	"with perf uprobe events"

# Each perf uprobe event is removed after a kernel grace period, one at a
# time, with the target slowed until the last is gone: 40 threads on every
# CPU with a return probe are more events than --max-events allows by
# default, so the trace is refused before any probe is placed, and the
# target never slows down. Raised, it runs.
spawn "$T/wide.out" "$TARGETS/spinner" 30 40
WIDE=$PID
wait_for 60 rates_past "$T/wide.out" 0 20
BASE=$(rate_min "$T/wide.out" 6)
RECCE_NO_BPF=1 run "$RECCE" trace -p "$WIDE" spin_step --return --time 2
is "$RC" 1 "perf uprobe events on 41 threads with returns: refused, exit 1" || show_run
like "$(cat "$ERR")" "needs $((41 * 2 * $(nproc))) perf uprobe events \\(2 probes on each thread and each of $(nproc) CPUs\\), more than --max-events 100" \
	"saying how many and why they cost the target"
like "$(cat "$ERR")" 'raise --max-events' "and what to do"
NOW=$(rate_min "$T/wide.out" 4)
cmp_ok "$NOW" '>=' "$BASE / 10" "the target ran on at full speed ($NOW against $BASE)"
RECCE_NO_BPF=1 run "$RECCE" trace -p "$WIDE" spin_step --count 4 --max-events 0
is "$RC" 0 "with --max-events 0 it is traced" || show_run
is "$(grep -c 'spin_step(' "$OUT")" 4 "the 4 calls asked for"
run "$RECCE" trace -p "$WIDE" spin_step --return --count 4
is "$RC" 0 "with BPF links the budget does not apply" || show_run
# Without the breaker, 41 threads fill rings of one page and the kernel
# drops events: a call whose return was dropped says so, and is never
# shown unwound (spin_step never unwinds). recce is stopped while the
# target reports two windows of calls, so that the rings surely overflow;
# then the target slows down to a call every 500 ms a thread, and recce
# goes on: the next call of a thread whose return was dropped comes
# after it, with no loss while recce reads them, so only the count each
# hit carries from when it was written tells that one came between.
RECCE_RING_PAGES=1 spawn_recce "$T/drop.out" "$T/drop.err" trace -p "$WIDE" spin_step \
	--return --count 0 --limit 0 --time 600
DROP=$PID
wait_for 60 grep -q '^recce: tracing' "$T/drop.err"
kill -STOP "$DROP"
SEEN=$(grep -c '^rate [1-9]' "$T/wide.out")
wait_for 60 lines_at_least "$T/wide.out" '^rate [1-9]' "$((SEEN + 2))" ||
	diag "the target reported no two windows of calls while recce was stopped"
kill -USR2 "$WIDE"
wait_for 60 grep -q '^slow$' "$T/wide.out" || diag "the target did not slow down"
SEEN=$(grep -c '^rate' "$T/wide.out")
wait_for 60 lines_at_least "$T/wide.out" '^rate' "$((SEEN + 1))"
kill -CONT "$DROP"
# Two calls a thread after recce goes on (a second, 20 windows).
SEEN=$(grep -c '^rate' "$T/wide.out")
wait_for 60 lines_at_least "$T/wide.out" '^rate' "$((SEEN + 20))"
kill -INT "$DROP"
wait "$DROP"
is "$?" 0 "a trace at full rate exits 0" || diag "$(cat "$T/drop.err")"
like "$(cat "$T/drop.err")" 'the kernel dropped [0-9]+ events' "the kernel dropped events, and recce says so"
is "$(grep -c 'unwound' "$T/drop.out")" 0 "no call is shown unwound when its return was dropped"
like "$(grep -m1 ' --> ' "$T/drop.out")" 'spin_step/1 --> ([0-9]+  \(|\(return lost\)$)' \
	"returns read as a value, or (return lost)"
kill_quietly "$WIDE"

# --count 1, the ring full after that call: recce is stopped before the
# target makes its first call, and goes on when it has made half its
# requests, which a ring of one page does not hold. What the kernel
# dropped came after the call shown, and the run says so, not as a
# warning.
spawn_ready "$T/cnt.out" "$TARGETS/tree" 20000 go 1 1000000 half
CNT=$PID
RECCE_RING_PAGES=1 spawn_recce "$T/cnt.rec" "$T/cnt.err" trace -p "$CNT" tree:request --count 1 \
	--limit 0 --time 600
R=$PID
wait_for 60 grep -q '^recce: tracing' "$T/cnt.err"
kill -STOP "$R"
kill -USR1 "$CNT"
wait_for 60 grep -q '^tree: half$' "$T/cnt.out" || diag "the target did not reach half its requests"
kill -CONT "$R"
wait_exit 60 "$R"
is "$WAIT_RC" 0 "--count 1, the ring full after it: trace exits 0" || cat "$T/cnt.err"
is "$(grep -cE 'tree:request\(i=(0|1000)\)$' "$T/cnt.rec")" 1 "and shows the first call, of either thread" ||
	cat "$T/cnt.rec"
like "$(cat "$T/cnt.err")" 'recce: the kernel dropped [1-9][0-9]* events \(the ring was full\), all after the last call --count asked for: none of the calls shown is missing$' \
	"and says the kernel dropped events, all after it"
unlike "$(cat "$T/cnt.err")" 'warning' "which is no warning"
kill -USR1 "$CNT"
wait_exit 60 "$CNT"

# The other tests, on perf uprobe events.
for t in trace-basic trace-more trace-unwind; do
	nested "perf uprobe events, $t.t" "$(dirname "$0")/$t.t" RECCE_NO_BPF=1
done

done_testing
