#!/bin/bash
# recce tasks --libuv: a running program built against Debian's libuv1,
# never changed nor restarted for recce, shows each of its callbacks as a
# task type named by the callback's function: the exact runs of its
# timers, of its TCP echo's connection and read callbacks and of its
# signal handler, with execution times within 10% of what the callbacks
# measured of themselves; the same numbers on /metrics with --serve; the
# program runs on after recce is gone, even SIGKILLed, with its code as
# in its files. A Node.js server, whose libuv is in its executable, shows
# the C++ callbacks it gives libuv, and trips the circuit breaker when
# its callbacks come faster than --limit. A process without libuv and an
# event file are refused with what to do.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/uv-loop" "$TARGETS/hot"

spawn "$T/uv.out" "$TARGETS/uv-loop"
UV=$PID
wait_for 5 grep -q ready "$T/uv.out" || diag "uv-loop did not start: $(cat "$T/uv.out")"

spawn_recce "$T/t.out" "$T/t.err" tasks --libuv -p "$UV" --json -d 4 -i 4
TASKS=$PID
wait_for 10 grep -q 'following the callbacks' "$T/t.err" || diag "$(cat "$T/t.err")"
like "$(cat "$T/t.err")" "following the callbacks of process $UV through /[^ ]*/libuv\\.so[.0-9]* \\([0-9]+ call sites probed\\)" \
	"it says which libuv it follows"
kill -USR1 "$UV"
wait_for 10 grep -q done "$T/uv.out" || diag "uv-loop did not finish: $(cat "$T/uv.out")"
wait_exit 15 "$TASKS"
is "$WAIT_RC" 0 "tasks --libuv -d 4 exits 0" || diag "$(cat "$T/t.err")"

tail -n 1 "$T/t.out" >"$T/last.json"
# field TYPE KEY: KEY of task type TYPE in the last JSON object.
field()
{
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["types"]:
    if t["type"] == sys.argv[2]:
        print(t[sys.argv[3]])
        break
else:
    print("none")' "$T/last.json" "$1" "$2"
}
is "$(field tick_fast runs)" 100 "the 3 ms timer's callback ran exactly 100 times"
is "$(field tick_fast created)" 100 "each run one task"
is "$(field tick_slow runs)" 20 "the 10 ms timer's exactly 20"
is "$(field client_read runs)" 50 "the echo client's read callback, 50 echoes"
is "$(field on_connection runs)" 1 "the server's connection callback, once"
is "$(field on_connected runs)" 1 "the client's connect callback, once"
is "$(field on_signal runs)" 1 "the signal handler, once"
is "$(field pool_work runs)" 20 "the thread pool's work callback, 20 runs on its own thread"
is "$(field after_work runs)" 20 "its completion, reached by a tail call, 20 runs"
is "$(field after_stat runs)" 20 "a file-system completion, reached by a tail call, 20 runs"
cmp_ok "$(field server_read runs)" -ge 50 "the server's read callback, at least the 50 messages"
cmp_ok "$(field idle_tick runs)" -ge 20 "the idle timer ticks throughout"

# Execution times against the callbacks' own clocks.
for tick in tick_fast tick_slow; do
	OWN=$(awk -v t="$tick" '$1 == t { print $3 }' "$T/uv.out")
	SEEN=$(field "$tick" exec_ns)
	ok "$tick: execution time within 10% of its own measure ($SEEN ns against $OWN)" \
		awk "BEGIN { exit !($SEEN > 0.9 * $OWN && $SEEN < 1.1 * $OWN) }"
done
MAX=$(field tick_slow exec_max_ns)
cmp_ok "$MAX" -ge 5000000 "tick_slow's longest run is at least its 5 ms ($MAX ns)"
like "$(head -n 1 "$T/t.out")" "\"pid\": *$UV" "the JSON names the process"

ok "the program runs on after recce" kill -0 "$UV"

# The same through Prometheus's text format.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
spawn_recce "$T/s.out" "$T/s.err" tasks --libuv -p "$UV" --serve "127.0.0.1:$PORT"
SERVE=$PID
wait_for 10 grep -q 'serving Prometheus' "$T/s.err" || diag "$(cat "$T/s.err")"
# The idle timer fires every few ms: wait for its first callbacks counted.
counted()
{
	METRICS=$(curl -sf "http://127.0.0.1:$PORT/metrics") &&
		grep -Eq "^recce_task_runs_total\\{pid=\"$UV\",comm=\"uv-loop\",type=\"idle_tick\"\\} [1-9]" <<<"$METRICS"
}
wait_for 10 counted
like "$METRICS" "recce_task_runs_total\\{pid=\"$UV\",comm=\"uv-loop\",type=\"idle_tick\"\\} [1-9]" \
	"--serve: /metrics counts the idle timer's callbacks"
kill -INT "$SERVE"
wait_exit 10 "$SERVE"
is "$WAIT_RC" 0 "and stops on Ctrl-C with status 0"
ok "the program still runs" kill -0 "$UV"

# Killed outright, recce leaves no probe behind: libuv's code in the
# process is its file's again, byte for byte.
spawn_recce "$T/k.out" "$T/k.err" tasks --libuv -p "$UV" -b
KILLED=$PID
wait_for 10 grep -q 'following the callbacks' "$T/k.err" || diag "$(cat "$T/k.err")"
run python3 tests/cli/code-bytes.py "$UV"
is "$RC" 1 "while recce follows it, libuv's calls hold breakpoints" || show_run
kill_quietly "$KILLED"
wait_for 2 python3 tests/cli/code-bytes.py "$UV"
run python3 tests/cli/code-bytes.py "$UV"
is "$RC" 0 "recce SIGKILLed, every byte of code equals its file again" || show_run
ok "and the program runs on" kill -0 "$UV"

# --- Node.js, whose libuv is linked into its executable ----------------------

if command -v node >/dev/null; then
	cat >"$T/app.js" <<'EOF'
const net = require('net');
const server = net.createServer((s) => s.on('data', (d) => s.write(d)));
server.listen(0, '127.0.0.1', () => {
  const c = net.connect(server.address().port, '127.0.0.1');
  c.on('data', () => {});
  setInterval(() => c.write('ping\n'), 5);
  console.log('ready');
});
EOF
	spawn "$T/node.out" node "$T/app.js"
	NODEPID=$PID
	wait_for 10 grep -q ready "$T/node.out" || diag "node did not start: $(cat "$T/node.out")"
	RUN_TIMEOUT=120 run "$RECCE" tasks --libuv -p "$NODEPID" --json -d 3 -i 3
	is "$RC" 0 "tasks --libuv on a Node.js server exits 0" || show_run
	like "$(cat "$ERR")" "following the callbacks of process $NODEPID through /[^ ]*node " \
		"it finds the libuv inside node's own executable"
	tail -n 1 "$OUT" >"$T/last.json"
	# type_runs TEXT: the runs of the callbacks whose names hold TEXT.
	type_runs()
	{
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(t["runs"] for t in d["types"] if sys.argv[2] in t["type"]))' "$T/last.json" "$1"
	}
	cmp_ok "$(type_runs RunTimers)" -ge 100 "the interval's timer callback (node's RunTimers), 5 ms apart" ||
		diag "$(cat "$T/last.json")"
	cmp_ok "$(type_runs LibuvStreamWrap::ReadStart)" -ge 200 "the sockets' read callbacks (in LibuvStreamWrap::ReadStart), a message each"
	is "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(1 for t in d["types"] if t["type"].startswith("uv_")))' "$T/last.json")" \
		0 "none of libuv's own functions is taken for a callback"
	ok "node runs on" kill -0 "$NODEPID"

	# Its callbacks, about 2,000 a second, trip a breaker set at 500.
	RUN_TIMEOUT=120 run "$RECCE" tasks --libuv -p "$NODEPID" -b -d 30 --limit 500/1000
	is "$RC" 0 "--limit 500/1000 on it: exit 0" || show_run
	like "$(cat "$ERR")" "more than 500 callbacks within 1000 ms: every probe removed, so as not to slow pid $NODEPID further" 		"the breaker trips and says so"
	cmp_ok "$ELAPSED" '<' 20 "and recce stops then, not after -d 30 (${ELAPSED}s)"
	like "$(cat "$OUT")" 'RunTimers' "with the numbers up to then"
	run python3 tests/cli/code-bytes.py "$NODEPID"
	is "$RC" 0 "node's code is its file's again" || show_run
	ok "node runs on" kill -0 "$NODEPID"
else
	skip 11 "node is not installed"
fi

# --- refusals ---------------------------------------------------------------

spawn "$T/hot.out" "$TARGETS/hot" 30
HOT=$PID
run "$RECCE" tasks --libuv -p "$HOT" -d 1
is "$RC" 1 "a process without libuv: exit 1"
like "$(cat "$ERR")" "process $HOT has no libuv: neither libuv\\.so\\.1 nor a program with libuv in it" "that says so"
run "$RECCE" tasks --libuv "$T/x.events"
is "$RC" 2 "--libuv with an event file: usage error"
like "$(cat "$ERR")" "--libuv follows a running process: give -p PID" "that says what to give"
run "$RECCE" tasks -p "$UV" --limit 10/1000
is "$RC" 2 "--limit without --libuv: usage error"
like "$(cat "$ERR")" "--limit is --libuv's circuit breaker: give --libuv" "that says so"
run "$RECCE" tasks --libuv -p "$UV" --limit 10
is "$RC" 2 "--limit 10: usage error"
like "$(cat "$ERR")" "--limit wants N/MS \\(callbacks within milliseconds\\) or 0, not '10'" "that says what it wants"
run "$RECCE" tasks --libuv -p "$(unused_pid)" -d 1
is "$RC" 1 "a PID that is not there: exit 1"
like "$(cat "$ERR")" "no process with PID" "that says so"

done_testing
