#!/bin/bash
# What flows back from a command on a node besides its output.
#
# A client that reads slowly costs the node nothing: a trace of 20,000
# calls streamed to a client whose standard output nobody reads ends on
# the node on time (its target unslowed, the agent serving others), the
# lines the agent could not hold are dropped whole and counted, and what
# arrives plus what was dropped is every call, exactly.
#
# A client SIGKILLed mid-trace leaves its target at full speed within a
# second.
#
# Long operations say how far they got: a recording its seconds, a file
# fetched its bytes; as lines with RECCE_PROGRESS=1, redrawn on one line
# of a terminal, never where nobody asked and nobody looks.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/spinner"

SOCK="$T/agent/a.sock"
NODE="unix:$SOCK"
N=20000
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$SOCK" --client-buffer 64K \
	--files "$T/files"
wait_for 5 test -S "$SOCK" || diag "the agent did not make its socket: $(cat "$T/agent.err")"

spawn_exec "$T/spin.out" "$TARGETS/spinner" 60 1
SPIN=$PID

# The client's standard output is a FIFO that nobody reads until the
# trace is over on the node.
mkfifo "$T/fifo"
setsid "$RECCE" --node "$NODE" trace -p "$SPIN" spin_step --count "$N" --limit 0 --time 60 \
	>"$T/fifo" 2>"$T/slow.err" </dev/null &
CLIENT=$!
_spawned+=("$CLIENT")
exec 7<"$T/fifo"
node_trace() { pgrep -f "^recce trace -p $SPIN spin_step" >/dev/null; }
wait_for 10 node_trace || diag "the trace never started on the node: $(cat "$T/slow.err")"
ok "the node's trace ends while its client reads nothing" wait_for 30 eval '! node_trace'

run "$RECCE" --node "$NODE" top -b -n 1 -d 0.3 -p "$SPIN"
is "$RC" 0 "the agent serves another client meanwhile" || show_run
ok "the target still runs" kill -0 "$SPIN"

cat <&7 >"$T/slow.out"
exec 7<&-
wait_exit 20 "$CLIENT"
is "$WAIT_RC" 0 "the slow client exits 0 once it reads" || diag "$(cat "$T/slow.err")"
like "$(cat "$T/slow.err")" "stopped after $N events \\(--count $N\\)" "with trace's stop line"
like "$(cat "$T/slow.err")" \
	'recce agent: [0-9]+ lines of output dropped: this client read them too slowly \([0-9]+ in all\)' \
	"the client is told lines were dropped"
KEPT=$(grep -c 'spin_step(' "$T/slow.out")
DROPPED=$(sed -n 's/.*(\([0-9]*\) in all)$/\1/p' "$T/slow.err" | tail -n 1)
cmp_ok "${DROPPED:-0}" -gt 0 "some lines were dropped ($DROPPED)"
cmp_ok "$KEPT" -gt 0 "some arrived ($KEPT)"
is "$((KEPT + ${DROPPED:-0}))" "$N" "those that arrived and those dropped are every call"
is "$(grep -vc '^[0-9:.]* <[0-9]*> spinner:spin_step(' "$T/slow.out")" 0 \
	"every line that arrived is whole"

# A client that keeps up loses nothing.
run "$RECCE" --node "$NODE" trace -p "$SPIN" spin_step --count 2000 --limit 0
is "$(grep -c 'spin_step(' "$OUT")" 2000 "a client that reads gets all 2000 calls"
# (The kernel may still drop probe events when the machine is too busy
# for recce to read them: those are the trace's, counted and said.)
unlike "$(cat "$ERR")" 'lines of output dropped' "and the agent drops none of its output"

# --- a client killed mid-trace -------------------------------------------

# The spinner's calls in its last 50 ms window, and the mean of its last 5.
rate_last() { awk '/^rate/ { r = $2 } END { print r + 0 }' "$T/spin.out"; }
FULL=$(tail -n 5 "$T/spin.out" | awk '/^rate/ { s += $2; n++ } END { print n ? int(s / n) : 0 }')
spawn_recce "$T/k.out" "$T/k.err" --node "$NODE" trace -p "$SPIN" spin_step --count 0 --time 60 --limit 0
CLIENT=$PID
wait_for 10 node_trace || diag "the trace never started on the node"
# The spinner's next 50 ms windows show the probes' cost.
slowed() { [ "$(rate_last)" -lt "$((FULL / 4))" ]; }
wait_for 10 slowed
SLOWED=$(rate_last)
cmp_ok "$SLOWED" -lt "$((FULL / 4))" "traced, the target slows ($FULL calls a window before, $SLOWED now)"
kill -KILL "$CLIENT"
ok "the client SIGKILLed, its target is at full speed again within a second" \
	wait_for 1 eval '[ "$(rate_last)" -gt "$((FULL / 2))" ]' || diag "$(tail -n 5 "$T/spin.out")"
ok "and the trace is gone from the node" wait_for 2 eval '! node_trace'

# --- progress ------------------------------------------------------------

RECCE_PROGRESS=1 run "$RECCE" --node "$NODE" record -p "$SPIN" -d 2.5 -o "$T/spin.pb.gz"
is "$RC" 0 "record on the node exits 0" || show_run
PROG=$(grep -c "^recce: $NODE: recording: [0-9.]* s of 2\.5 s ([0-9]*%)\$" "$ERR")
cmp_ok "$PROG" -ge 3 "RECCE_PROGRESS=1: a recording says how far it got, about twice a second ($PROG lines)" ||
	diag "$(cat "$ERR")"
is "$(grep "recording: " "$ERR" | sed 's/.*recording: \([0-9.]*\) s.*/\1/' | sort -n -c && echo sorted)" \
	sorted "in seconds that only go up"
# (The summary gives the time the recording took: 2.6 s on a busy
# machine.)
like "$(cat "$ERR")" 'recce: [0-9]+ samples in 2\.[5-9] s' "then record's own summary"
run "$RECCE" --node "$NODE" record -p "$SPIN" -d 1 -o "$T/spin2.pb.gz"
unlike "$(cat "$ERR")" 'recording: ' "without it and without a terminal, nothing more than locally"

if command -v tmux >/dev/null; then
	TM="recce-flow-$$"
	tmux new-session -d -s "$TM" -x 150 -y 10 \
		"$RECCE --node $NODE record -p $SPIN -d 3 -o $T/tty.pb.gz; echo status=\$?; sleep 30"
	wait_for 10 eval "tmux capture-pane -p -t $TM | grep -q 'recording: .* of 3\\.0 s'"
	like "$(tmux capture-pane -p -t "$TM")" "recce: $NODE: recording: [0-9.]+ s of 3\\.0 s \\([0-9]+%\\)" \
		"on a terminal, the progress shows on its own"
	wait_for 15 eval "tmux capture-pane -p -t $TM | grep -q status="
	SCREEN=$(tmux capture-pane -p -t "$TM")
	tmux kill-session -t "$TM" 2>/dev/null
	unlike "$SCREEN" 'recording: ' "and is gone from the screen once the command is done"
	like "$SCREEN" 'status=0' "which exits 0"
else
	skip 4 "tmux is not installed"
fi

# A file that takes more than a second to come says how far it got.
mkdir -p "$T/files/uid-$(id -u)" "$T/here"
truncate -s 1G "$T/files/uid-$(id -u)/big"
(cd "$T/here" && RECCE_PROGRESS=1 exec "$RECCE" --node "$NODE" fetch big >"$T/fetch.out" 2>"$T/fetch.err") &
FETCH=$!
_spawned+=("$FETCH")
wait_for 10 test -s "$T/here/big.part"
kill -STOP "$FETCH"
sleep 1.5 # the client stalled this long: a stall, not a wait
kill -CONT "$FETCH"
wait_exit 60 "$FETCH"
is "$WAIT_RC" 0 "fetch of a 1 GiB file exits 0" || diag "$(cat "$T/fetch.err")"
like "$(cat "$T/fetch.err")" \
	"recce: $NODE: sending big: [0-9.]+ MiB of 1024\\.0 MiB \\([0-9]+%\\)" \
	"and said how far it had got while it came"
is "$(stat -c %s "$T/here/big")" 1073741824 "whole"
rm -f "$T/here/big" "$T/files/uid-$(id -u)/big"

run "$RECCE" agent --socket "$T/b.sock" --client-buffer 12
is "$RC" 2 "--client-buffer 12 is a usage error"
like "$(cat "$ERR")" "--client-buffer wants a size from 4K to 4G, such as 8M, not '12'" "that says why"

done_testing
