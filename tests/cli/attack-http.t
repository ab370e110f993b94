#!/bin/bash
# Attacks on recce's HTTP pages before any authentication: a client that
# sends half a request and closes, again and again, must not end the
# continuous profiler of the agent, `recce tasks --serve` or `recce view`
# (it used to kill each with SIGPIPE); each still answers the next
# client, and the page answers with headers that keep it out of caches,
# referrers and frames. Forty clients that send a byte every half second
# (slowloris) neither blind the profiler (its windows keep their samples)
# nor keep another client from /metrics.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/ev-tasks"

# half_requests HOST:PORT: five clients that each send the first line of a
# request and close at once, the last with a reset.
half_requests()
{
	python3 - "$1" <<'EOF'
import socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
for i in range(5):
    s = socket.create_connection((host, int(port)))
    s.sendall(b"GET /metrics HTTP/1.1\r\n")
    if i == 4:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
EOF
}

# slow_clients N HOST:PORT: N clients that trickle a request a byte every
# half second (attack-slowloris.py), connected when it returns; sets SLOW.
slow_clients()
{
	rm -f "$T/slow-ready"
	python3 tests/cli/attack-slowloris.py "$1" "$2" "$T/slow-ready" > /dev/null 2>&1 &
	SLOW=$!
	wait_for 20 test -e "$T/slow-ready" || diag "the $1 slow clients did not connect"
}

# --- the agent's continuous profiler ---------------------------------------

spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$T/a.sock" --continuous --store "$T/store" \
	--window 1s --http 127.0.0.1:0
AGENT=$PID
wait_for 20 grep -q 'metrics at http' "$T/agent.err" || diag "the agent did not start: $(cat "$T/agent.err")"
HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent.err")
half_requests "$HTTP"
run curl -sf --max-time 20 "http://$HTTP/metrics"
is "$RC" 0 "after five half requests, the profiler still serves /metrics" || show_run
like "$(cat "$OUT")" 'recce_agent_windows_written_total' "with its counters"
run curl -s --max-time 20 -D "$T/headers" -o /dev/null "http://$HTTP/"
like "$(tr -d '\r' < "$T/headers")" $'Cache-Control: no-store' "the page is not kept in caches"
like "$(tr -d '\r' < "$T/headers")" $'Referrer-Policy: no-referrer' "nor its address sent on as a referrer"
like "$(tr -d '\r' < "$T/headers")" "Content-Security-Policy: frame-ancestors 'none'" "nor shown in another site's frame"
unlike "$(cat "$T/agent.err")" 'profiler.*(died|restart)' "the profiler was never restarted"

# Forty clients that send a request one byte every half second, for at
# most 40 s.
slow_clients 40 "$HTTP"
metric()
{
	curl -sf --max-time 20 "http://$HTTP/metrics" | awk -v m="recce_agent_$1" '$1 == m { print $2 }'
}
windows_past()
{
	[ "$(metric windows_written_total)" -ge "$1" ]
}
W0=$(metric windows_written_total)
S0=$(metric samples_total)
isnt "$W0" "" "with 40 slow clients connected, /metrics still answers"
spawn "$T/busy.out" "$TARGETS/hot" 60
wait_for 30 windows_past $((W0 + 2)) || diag "no two windows were written while the slow clients trickled"
S1=$(metric samples_total)
cmp_ok "$S1" '>' "$S0" "the windows written meanwhile hold samples ($S0 -> $S1): the profiler was not blinded"
kill "$SLOW" 2>/dev/null
wait "$SLOW" 2>/dev/null

# --- recce tasks --serve --------------------------------------------------

spawn "$T/ev.out" "$TARGETS/ev-tasks" loop
EV=$PID
wait_for 10 test -e "/dev/shm/recce-$EV.events" || diag "the target made no event file"
spawn_recce "$T/tasks.out" "$T/tasks.err" tasks -p "$EV" --serve 127.0.0.1:0
TASKS=$PID
wait_for 10 grep -q 'serving Prometheus metrics at' "$T/tasks.err" || diag "tasks --serve did not start: $(cat "$T/tasks.err")"
HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\)\/metrics.*/\1/p' "$T/tasks.err")
half_requests "$HTTP"
run curl -sf --max-time 20 "http://$HTTP/metrics"
is "$RC" 0 "tasks --serve still answers after five half requests" || show_run
ok "and still runs" kill -0 "$TASKS"
# One client that trickles its request a byte every half second holds
# it up for the request's 2 s in all, not a second a byte.
slow_clients 1 "$HTTP"
run curl -sf --max-time 20 "http://$HTTP/metrics"
is "$RC" 0 "tasks --serve answers another client while one trickles its request" || show_run
kill "$SLOW" 2>/dev/null
wait "$SLOW" 2>/dev/null

# --- recce view ----------------------------------------------------------------

run "$RECCE" record -d 0.5 -o "$T/p.pb.gz" -- "$TARGETS/hot" 1
spawn_recce "$T/view.out" "$T/view.err" view "$T/p.pb.gz" --http 127.0.0.1:0
VIEW=$PID
wait_for 10 grep -q 'serving' "$T/view.err" || diag "view did not start: $(cat "$T/view.err")"
HTTP=$(sed -n 's/.*at http:\/\/\([0-9.:]*\)\/.*/\1/p' "$T/view.err")
half_requests "$HTTP"
run curl -sf --max-time 20 -o /dev/null "http://$HTTP/"
is "$RC" 0 "view still serves its page after five half requests" || show_run
ok "and still runs" kill -0 "$VIEW"

done_testing
