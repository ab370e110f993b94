#!/bin/bash
# Floods of the agent's TLS port before any request: 70 connections that
# never finish their handshake (one byte every 2 s), 70 with a good
# certificate that say Hello and nothing more, 10 that start a 16 MiB
# frame. The agent keeps at most its cap of connections, serves a good
# client in the middle of each flood, and closes every one of them by its
# deadline (10 s from accept to request), not one byte at a time later.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run "$RECCE" certs init "$T/tls"
PORT=$(free_port)
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$T/a.sock" --listen "127.0.0.1:$PORT" --tls "$T/tls"
AGENT=$PID
wait_for 10 grep -q 'serving on' "$T/agent.err" || diag "the agent did not start: $(cat "$T/agent.err")"

for flood in "slow 70" "hello 70" "big 10"; do
	set -- $flood
	rm -f "$T/ready"
	python3 tests/cli/attack-flood.py "$PORT" "$T/tls" "$1" "$2" "$T/ready" > "$T/flood.out" 2>&1 &
	FLOOD=$!
	wait_for 60 test -e "$T/ready" || diag "the $1 flood did not open its connections: $(cat "$T/flood.out")"
	children=$(pgrep -c -P "$AGENT")
	ok "during the $1 flood the agent keeps at most 64 connections (has $children)" test "$children" -le 64
	run "$RECCE" --tls "$T/tls" --node "127.0.0.1:$PORT" top -b -n 1
	is "$RC" 0 "a good client is served in the middle of the $1 flood" || show_run
	wait "$FLOOD"
	is "$(cat "$T/flood.out")" "closed $2 of $2" "the agent closed every connection of the $1 flood"
done
ok "the agent still runs" kill -0 "$AGENT"

done_testing
