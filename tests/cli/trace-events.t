#!/bin/bash
# `recce trace` on kernels without uprobe_multi links: RECCE_NO_BPF=1 makes
# recce use its other mechanism, one perf uprobe event per probe, thread
# and CPU, and the core tests of trace-basic.t, trace-more.t and
# trace-unwind.t must hold for it too. First, that each run says which
# mechanism it used.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

spawn "$T/c1.out" "$TARGETS/calls" 5 700
sleep 0.2
run "$RECCE" trace -p "$PID" add_pair --count 0 --time 3
is "$RC" 0 "trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 5 "the 5 calls are traced"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with BPF links;" \
	"with BPF links where the kernel has them"

# Callers and stacks come through the same links (the record, with its
# call chain, fits the BPF stack).
spawn "$T/c3.out" "$TARGETS/calls" 5 700
sleep 0.2
run "$RECCE" trace -p "$PID" add_pair --stack --count 0 --time 3
is "$(grep -c '^    at make_calls ' "$OUT")" 5 "--stack names each call's caller"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with BPF links;" \
	"and still uses BPF links"

spawn "$T/c2.out" "$TARGETS/calls" 5 700
sleep 0.2
RECCE_NO_BPF=1 run "$RECCE" trace -p "$PID" add_pair --count 0 --time 3
is "$RC" 0 "RECCE_NO_BPF=1 trace exits 0" || show_run
is "$(grep -c 'calls:add_pair(' "$OUT")" 5 "the 5 calls are traced"
like "$(cat "$ERR")" "^recce: tracing 1 function in process $PID with perf uprobe events;" \
	"with perf uprobe events"

# The other tests, on perf uprobe events.
for t in trace-basic trace-more trace-unwind; do
	RECCE_NO_BPF=1 bash "$(dirname "$0")/$t.t" > "$T/$t.tap" 2>&1
	is "$?" 0 "$t.t passes with perf uprobe events" || sed 's/^/# /' "$T/$t.tap" | grep -v '^# ok'
done
