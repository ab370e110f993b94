#!/bin/bash
# `recce trace` on kernels with BPF but without uprobe_multi links (Linux
# 5.15 to 6.5, Debian 12's 6.1 among them): one perf uprobe event per
# probe and process, the same BPF program run at each hit through a link
# with the probe's cookie. RECCE_NO_LINKS=1 makes recce use it here. The
# hits are link mode's, strings and objects copied at the hit included:
# the core tests of trace-basic.t, trace-more.t, trace-unwind.t,
# trace-values.t and trace-usdt.t (CPython's function names, copied at the
# hit), and tasks.t (libuv's callbacks, read at each call), must hold for
# it too. First, that it says which it used, that one
# event per probe serves every thread, present and future, and that each
# hit is written once whatever the threads.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls" "$TARGETS/threads"

spawn_ready "$T/c.out" "$TARGETS/calls" 5 go
RECCE_NO_LINKS=1 run_go "$PID" trace -p "$PID" add_pair --count 0 --time 60
is "$RC" 0 "RECCE_NO_LINKS=1 trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 5 "the 5 calls are traced, each once"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with BPF on perf uprobe events;" \
	"with BPF on perf uprobe events"

# Threads made while traced: a wave of two every quarter second, each
# running late_worker_spin() once. Every one is traced from its first
# instruction (the event is the process's), once.
spawn "$T/w.out" "$TARGETS/threads" 2 --wait
W=$PID
wait_for 10 grep -q 'early wave done' "$T/w.out" || diag "the threads target never started"
RECCE_NO_LINKS=1 spawn_recce "$T/w.trace" "$T/w.err" trace -p "$W" late_worker_spin --count 0 \
	--time 60
TR=$PID
wait_for 60 grep -q '^recce: tracing' "$T/w.err" || diag "recce never traced"
kill -USR1 "$W"
wait_exit 60 "$W" || diag "the threads target did not end"
LATE=$(sed -n 's/^threads: \([0-9]*\) late threads$/\1/p' "$T/w.out")
kill -INT "$TR"
wait_exit 30 "$TR" || diag "recce did not stop"
cmp_ok "${LATE:-0}" '>' 2 "the target made threads while traced ($LATE)"
is "$(grep -c 'threads:late_worker_spin(' "$T/w.trace")" "$LATE" \
	"each new thread's call is traced, once: $LATE"
is "$(grep -o '<[0-9]*>' "$T/w.trace" | sort -u | wc -l)" "$LATE" "each on its own thread"
like "$(cat "$T/w.err")" 'with BPF on perf uprobe events' "and through BPF on perf uprobe events"

# --max-events counts an event per probe and process here, whatever the
# threads: past it, refused before any probe is placed.
spawn_ready "$T/m.out" "$TARGETS/calls" 5 go 1 6
RECCE_NO_LINKS=1 run "$RECCE" trace -p "$PID" add_pair --return --max-events 1
is "$RC" 1 "over --max-events: exit 1" || show_run
like "$(cat "$ERR")" "needs 2 perf uprobe events \\(2 probes in each process\\), more than --max-events 1" \
	"the events counted per process, not per thread"
RECCE_NO_LINKS=1 run_go "$PID" trace -p "$PID" add_pair --return --max-events 2 --count 0 --limit 0
is "$RC" 0 "within it: trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 30 "every call of its 6 threads (3 made while traced), once: 30"

for t in trace-basic trace-more trace-unwind trace-values trace-usdt tasks; do
	nested "BPF on perf uprobe events, $t.t" "$(dirname "$0")/$t.t" RECCE_NO_LINKS=1
done

done_testing
