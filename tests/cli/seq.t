#!/bin/bash
# librecce's sequence tokens and `recce seq`: the seed's three-process
# story (examples/fibchain.c: the emperor asks john, who asks paul, over
# TCP on loopback) merged in causal order into Mermaid whose participants
# and arrows are checked; the same from saved event files, from files of
# "another machine", and with a process missing; a Chrome trace whose
# flow arrows a viewer reads; seq_trace's serials exactly, between two
# threads; each hop's CPU from a profile recorded meanwhile; bad input.
. "$(dirname "$0")/lib.sh"
FIBCHAIN=$TARGETS/../fibchain
need_file "$RECCE" "$FIBCHAIN" "$TARGETS/ev-seq"
export RECCE_EVENTS_DIR="$T/shm"
mkdir -p "$RECCE_EVENTS_DIR"

# serve NAME PORT...: a fibchain server; its pid in PID, its port in PORT.
serve()
{
	spawn "$T/$1.out" "$FIBCHAIN" serve "$@"
	wait_for 10 grep -q '^listening on' "$T/$1.out" || fail "$1 did not start" "$(cat "$T/$1.out")"
	PORT=$(sed -n 's/^listening on //p' "$T/$1.out")
}

serve paul 0
paul=$PID
serve john 0 "$PORT"
john=$PID
spawn "$T/emperor.out" "$FIBCHAIN" ask emperor "$PORT" 20 3
emperor=$PID
wait_for 20 sh -c "[ \$(grep -c '^fib' '$T/emperor.out') -eq 3 ]" || fail "no answers" "$(cat "$T/emperor.out")"
is "$(sort -u "$T/emperor.out")" "fib(20) = 6765" "the emperor got fib(20) = 6765, three times"

run "$RECCE" seq -p "$emperor,$john,$paul" --mermaid
is "$RC" 0 "seq -p three processes --mermaid exits 0" || show_run
cp "$OUT" "$T/live.mmd"
is "$(head -1 "$OUT")" "sequenceDiagram" "a Mermaid sequenceDiagram"
is "$(grep participant "$OUT" | sed 's/^ *//')" "participant p0 as emperor
participant p1 as john
participant p2 as paul" "participants: emperor, john, paul, in the order they appear"
arrows=$(grep -- '->>' "$OUT" | sed 's/^ *//')
expect=$(for i in 1 2 3; do printf 'p0->>p1: ask-fib 1\np1->>p2: ask-fib 2\np2->>p1: ask-fib 3\np1->>p0: ask-fib 4\n'; done)
is "$arrows" "$expect" "each request: emperor -> john -> paul -> john -> emperor, serials 1 to 4"
is "$(grep -c 'Note over p0: ask-fib begins' "$OUT")" 3 "a note where each of the 3 tokens begins"
like "$(cat "$ERR")" "12 messages in 3 traces from 3 processes" "the summary"

run "$RECCE" seq -p "$emperor,$john,$paul"
is "$RC" 0 "text output exits 0"
is "$(grep -c '^trace [0-9a-f]\{32\}  ask-fib  (4 messages)' "$OUT")" 3 "text: 3 traces of 4 messages"
like "$(grep -m1 -- '->' "$OUT")" '^ +1  emperor +-> john +ask-fib$' "text: serial, from, to, label"

# --follow: read until every process is gone, then draw.
spawn_out="$T/follow.mmd"
"$RECCE" seq -p "$emperor,$john,$paul" -f --mermaid -o "$spawn_out" 2>"$T/follow.err" &
follower=$!
sleep 0.3 # a moment to have exited in, were it to: not a wait
ok "seq -f keeps reading while the processes run" kill -0 "$follower"
run "$RECCE" seq -p "$john,$paul" -d 0.2 --mermaid
is "$(grep -c -- '->>' "$OUT")" 12 "seq -d 0.2 reads for a while, then merges"

# The same from files saved on "each machine", after the processes are gone.
for p in emperor john paul; do
	run "$RECCE" events -p "${!p}" -o "$T/$p.events"
	is "$RC" 0 "events -p $p -o $p.events" || show_run
done
kill_quietly "$emperor" "$john" "$paul"
wait_for 5 _gone "$follower"
wait "$follower"
is "$?" 0 "seq -f stops once every process is gone, and exits 0"
ok "with the same diagram" cmp "$T/live.mmd" "$spawn_out"
run "$RECCE" seq merge "$T/emperor.events" "$T/john.events" "$T/paul.events" --mermaid
is "$RC" 0 "seq merge of the saved files exits 0"
ok "the same diagram as from the live processes" cmp "$T/live.mmd" "$OUT"

# paul's file is missing: its ends of the messages are unknown.
run "$RECCE" seq merge "$T/emperor.events" "$T/john.events"
is "$RC" 0 "seq merge without paul exits 0"
is "$(grep -c -E 'john +-> \?' "$OUT")" 3 "john's sends to paul go to ?"
is "$(grep -c -E '\? +-> john' "$OUT")" 3 "paul's answers come from ?"

# paul's file from another machine: the serials still order the messages.
cp "$T/paul.events" "$T/paul-far.events"
far=$(python3 - "$T/paul-far.events" "$(uname -n)" <<'PY'
import sys
path, host = sys.argv[1], sys.argv[2].encode()
data = bytearray(open(path, 'rb').read())
at = data.find(host + b'\0', 0, 4096)
assert at > 0
far = (b'faraway' * 10)[:len(host)]
data[at:at + len(host)] = far
open(path, 'wb').write(data)
print(far.decode())
PY
)
run "$RECCE" seq merge "$T/emperor.events" "$T/john.events" "$T/paul-far.events" --mermaid
is "$RC" 0 "seq merge across two machines exits 0"
like "$(grep 'participant p2' "$OUT")" "as paul@$far\$" "participants name their machine when there are several"
is "$(grep -c -- '->>' "$OUT")" 12 "and all 12 messages are matched"

run "$RECCE" seq merge "$T/emperor.events" "$T/john.events" "$T/paul.events" --chrome -o "$T/seq.json"
is "$RC" 0 "--chrome -o exits 0"
ok "the Chrome trace has 12 flow arrows, each from a send to a receive" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['traceEvents']
s = {e['id'] for e in t if e['ph'] == 's'}; f = {e['id'] for e in t if e['ph'] == 'f'}
names = {e['args']['name'] for e in t if e['ph'] == 'M'}
sys.exit(not (len(s) == 12 and s == f and names == {'emperor', 'john', 'paul'}))" "$T/seq.json"

# --- Serials exactly, between two threads --------------------------------------
spawn "$T/seq.out" "$TARGETS/ev-seq"
wait_for 10 grep -q '^ready' "$T/seq.out" || fail "ev-seq did not start"
is "$(sed -n 's/^inject-none //p' "$T/seq.out")" 0 "inject without a token writes nothing"
is "$(sed -n 's/^small //p' "$T/seq.out")" 0 "nor into a buffer too small"
is "$(sed -n 's/^garbage //p' "$T/seq.out")" -22 "extract of garbage: -EINVAL"
is "$(sed -n 's/^bare //p' "$T/seq.out")" "0 1" "a bare W3C traceparent is taken, and the thread carries it"
is "$(sed -n 's/^header 00-[0-9a-f]\{32\}-[0-9a-f]\{16\}-01;recce=//p' "$T/seq.out" | tr '\n' ' ')" \
	"0.1.ping-pong 1.2.ping-pong 2.3.ping-pong 3.4.ping-pong 4.5.ping-pong 5.6.ping-pong " \
	"headers: a traceparent, then last.current as seq_trace counts them"
run "$RECCE" seq -p "$PID"
like "$(cat "$OUT")" "trace 4bf92f3577b34da6a3ce929d0e0e4736  seq  \\(1 messages\\)" \
	"the bare traceparent's trace id is kept"
is "$(grep -c -- ' -> ' "$OUT")" 7 "6 ping-pong messages and the one from outside"
run "$RECCE" seq -p "$PID" --mermaid
is "$(grep participant "$OUT" | sed 's/^ *//')" "participant p0 as ev-seq/ev-seq
participant p1 as ev-seq/pong
participant unknown as ?" "two threads of one process that pass a token are a participant each"
is "$(grep -c -E 'p0->>p1: ping-pong [135]$|p1->>p0: ping-pong [246]$' "$OUT")" 6 \
	"the token goes back and forth between them"
kill_quietly "$PID"

# --- Each hop's profile -----------------------------------------------------
# john and paul recorded while the emperor asks twice: record labels paul's
# samples of each request with its trace id, and seq --profile puts each
# process's share of each trace under it, with the command that draws it.
serve paul 0
paul=$PID
serve john 0 "$PORT"
john=$PID
spawn_recce "$T/hops.rec.out" "$T/hops.rec.err" record -p "$john,$paul" -F 499 -d 600 -o "$T/hops.pb.gz"
R=$PID
wait_for 60 grep -q '^recce: recording' "$T/hops.rec.err" || diag "record never started"
spawn "$T/emperor.out" "$FIBCHAIN" ask emperor "$PORT" 38 2
emperor=$PID
wait_for 120 sh -c "[ \$(grep -c '^fib' '$T/emperor.out') -eq 2 ]" || fail "no answers" "$(cat "$T/emperor.out")"
kill -INT "$R"
wait_exit 60 "$R" || diag "record did not stop"
is "$WAIT_RC" 0 "record -p john,paul while the emperor asks exits 0"
run "$RECCE" seq -p "$emperor,$john,$paul" --profile "$T/hops.pb.gz"
is "$RC" 0 "seq --profile exits 0" || show_run
ids=$(sed -n 's/^trace \([0-9a-f]\{32\}\) .*/\1/p' "$OUT")
is "$(printf '%s\n' "$ids" | wc -l)" 2 "two traces"
hops=$(grep -E '^ +PROFILE +paul +[0-9.]+ ms cpu in [0-9]+ samples: recce report ' "$OUT")
is "$(printf '%s\n' "$hops" | sed -n 's/.*--tag trace_id=\([0-9a-f]*\) --pid \([0-9]*\)$/\1 \2/p')" \
	"$(printf "%s $paul\n" $ids)" "under each trace, paul's CPU in it, by its trace id and pid"
is "$(grep -c -E '^ +PROFILE +emperor +no samples in ' "$OUT")" 2 "the emperor, not recorded, has none"
# The command shown draws that hop: paul computing.
cmd=$(printf '%s\n' "$hops" | head -n 1 | sed 's/.*: recce report //')
# shellcheck disable=SC2086 # the command's words
run "$RECCE" report $cmd
is "$RC" 0 "the command it shows runs" || show_run
is "$(table_rows "$(cat "$OUT")" | head -n 1 | awk '{ print $4 }')" fib "and shows paul's fib on top"
n=$(printf '%s\n' "$hops" | head -n 1 | sed 's/.* in \([0-9]*\) samples:.*/\1/')
# shellcheck disable=SC2086 # the command's words
is "$(folded_total "$(folded $cmd)")" "$n" "the samples it counts are exactly those the command draws ($n)"
run "$RECCE" seq -p "$emperor,$john,$paul" --profile "$T/hops.pb.gz" --mermaid
is "$(grep -c -E '^ +Note over p2: [0-9.]+ ms cpu$' "$OUT")" 2 "--mermaid: a note of paul's CPU under each trace"
run "$RECCE" seq -p "$emperor,$john,$paul" --profile "$T/hops.pb.gz" --chrome
is "$RC" 2 "--profile with --chrome is a usage error"
run "$RECCE" seq -p "$emperor,$john,$paul" --profile "$T/nothing.pb.gz"
is "$RC" 1 "--profile of a missing file exits 1"
kill_quietly "$emperor" "$john" "$paul"

# --- Bad input --------------------------------------------------------------
spawn "$T/burst.out" "$TARGETS/ev-burst" 1 5
wait_for 10 grep -q '^ready' "$T/burst.out" || fail "ev-burst did not start"
run "$RECCE" seq -p "$PID"
is "$RC" 1 "a process with events but no sequences exits 1"
like "$(cat "$ERR")" "no sequence events .*recce_seq_begin" "and says what writes them"
kill_quietly "$PID"
run "$RECCE" seq -p "$(unused_pid)"
is "$RC" 1 "a pid that does not exist exits 1"
run "$RECCE" seq merge "$T/nothing.events"
is "$RC" 1 "a missing file exits 1"
like "$(cat "$ERR")" "no event file" "and says so"
run "$RECCE" seq
is "$RC" 2 "nothing to read is a usage error"
run "$RECCE" seq -p 1 --mermaid --chrome
is "$RC" 2 "two formats are a usage error"
true

done_testing
