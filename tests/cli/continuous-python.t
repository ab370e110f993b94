#!/bin/bash
# recce agent --continuous over a CPython, with no flag: the agent's
# windows carry the Python frames of Debian's python3.11, read at each
# sample, in place of the interpreter's frames that ran them, as `recce
# record` shows them; /metrics counts the samples with Python frames and
# those shown with native frames only, and a stack holds the
# interpreter's own frame only where those counts allow.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/python3.11
plan 8

SRC=tests/py/record-target.py
spawn "$T/py.out" /usr/bin/python3.11 "$SRC"
P=$PID
ok "the target is ready" wait_for 60 grep -q ready "$T/py.out"

spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$T/store" --window 1s --rate 99 --http 127.0.0.1:0
AGENT=$PID
wait_for 15 grep -q 'profiling every process' "$T/agent.err" ||
	diag "the agent did not start: $(cat "$T/agent.err")"
HTTP=http://$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent.err")
for i in 1 2 3; do next_window "$HTTP" || diag "no window $i"; done

run "$RECCE" query --store "$T/store" --pid "$P" --format folded
is "$RC" 0 "the query of the target exits 0" || show_run
cp "$OUT" "$T/py.folded"
CHAIN=';__main__\.outer;__main__\.Worker\.run;([^;]+;)+__main__\.spin( |;)'
cmp_ok "$(grep -cE "$CHAIN" "$T/py.folded")" '>' 0 \
	"the main thread's stacks run spin() from sorted()'s C code from Worker.run() from outer()" ||
	diag "$(head -c 2000 "$T/py.folded")"
is "$(grep ';__main__\.outer;' "$T/py.folded" | grep -vcE "$CHAIN")" 0 \
	"and every stack holding outer() does so, in that order"

curl -s --max-time 20 "$HTTP/metrics" > "$T/metrics"
metric() { sed -n "s/^recce_agent_$1 //p" "$T/metrics"; }
READ=$(metric python_samples_total)
UNPLACED=$(metric python_samples_unplaced_total)
UNREAD=$(metric python_samples_unread_total)
cmp_ok "${READ:-0}" '>' 0 "/metrics counts the samples whose Python frames were read"
# A sample keeps the interpreter's frame only where its Python frames were
# not read or did not fit: never more of them than /metrics counts (every
# CPython of the machine counted there; a sample is 1/99 s).
EVAL=$(awk '/_PyEval_EvalFrameDefault/ { n += $NF } END { printf "%d", n / 10101010 + 0.5 }' "$T/py.folded")
cmp_ok "$EVAL" '<=' "$((${UNPLACED:-0} + ${UNREAD:-0}))" \
	"the interpreter's frame shows in no more samples than /metrics counts without Python frames" ||
	diag "$(grep _PyEval_EvalFrameDefault "$T/py.folded" | head -n 3)"
like "$(cat "$T/metrics")" 'recce_agent_python_samples_unplaced_total [0-9]+' \
	"and counts those whose Python frames did not fit their native stack"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
is "$WAIT_RC" 0 "the agent exits 0 at Ctrl-C"
kill_quietly "$P"
