#!/bin/bash
# recce agent and recce --node: commands run on an agent's local socket
# print what they print locally and bring their -o files back (record,
# report, trace with exact counts, top -b); exit statuses and errors come
# through; every command is in the audit log; bad frames (garbage, an
# oversized length, a truncated frame, no hello) close that connection and
# the agent serves the next client; a client killed mid-trace leaves no
# tracer behind within a second; Ctrl-C of a client still brings the
# profile back; a user without access to the socket is refused.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls"

SOCK="$T/agent/a.sock"
NODE="unix:$SOCK"
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$SOCK"
AGENT=$PID
wait_for 5 test -S "$SOCK" || diag "the agent did not make its socket: $(cat "$T/agent.err")"
like "$(cat "$T/agent.err")" "serving on $SOCK \\(audit log $T/agent/audit.log\\)" \
	"the agent says where it serves"
is "$(stat -c %a "$SOCK") $(stat -c %a "$T/agent")" "600 700" "socket 0600 in a directory 0700"

# --- record, report, trace, top ------------------------------------------

spawn "$T/hot.out" "$TARGETS/hot" 60
HOT=$PID
run "$RECCE" --node "$NODE" record -p "$HOT" -d 1 -o "$T/here.pb.gz"
is "$RC" 0 "record on the node exits 0" || show_run
like "$(cat "$ERR")" 'recce: recording process at 99 Hz' "it prints what record prints"
like "$(cat "$ERR")" 'recce: [0-9]+ samples in [0-9.]+ s' "with its summary"
ok "the profile arrives at the -o path given" test -s "$T/here.pb.gz"
run "$RECCE" report -n 3 "$T/here.pb.gz"
like "$(cat "$OUT")" 'burn_cpu' "and names the target's functions"

run "$RECCE" report -n 5 --lines "$T/here.pb.gz"
LOCAL=$(cat "$OUT")
run "$RECCE" --node "$NODE" report -n 5 --lines "$T/here.pb.gz"
is "$(cat "$OUT")" "$LOCAL" "report on the node prints exactly what it prints here"

run "$RECCE" --node "$NODE" record -p "$HOT" -d 0.5 --output="$T/eq.pb.gz"
ok "--output=FILE comes back too" test -s "$T/eq.pb.gz"

spawn_exec "$T/calls.out" "$TARGETS/calls" 50 700 0
CALLS=$PID
run "$RECCE" --node "$NODE" trace -p "$CALLS" add_pair --return --count 4
is "$RC" 0 "trace on the node exits 0" || show_run
is "$(grep -c 'add_pair(' "$OUT")" 4 "--count 4 shows exactly 4 calls, streamed back"
like "$(cat "$ERR")" 'stopped after 4 events \(--count 4\); all probes removed' \
	"with trace's stop line"

run "$RECCE" --node "$NODE" top -b -n 1 -d 0.5 -p "$HOT"
is "$RC" 0 "top -b on the node exits 0" || show_run
like "$(cat "$OUT")" 'burn_cpu' "and shows the target's function"

# --- errors come through -------------------------------------------------

run "$RECCE" --node "$NODE" record -p "$(unused_pid)" -d 1 -o "$T/none.pb.gz"
is "$RC" 1 "a runtime error on the node exits 1"
like "$(cat "$ERR")" 'no process with PID' "with the node's message"
run "$RECCE" --node "$NODE" record -F 0 -p "$HOT"
is "$RC" 2 "a usage error on the node exits 2"
run "$RECCE" --node "$NODE" agent --stdio
is "$RC" 1 "the agent refuses to run an agent"
like "$(cat "$ERR")" 'refused: the agent runs recce.s commands' "and says why"
run "$RECCE" --node "unix:$T/nowhere.sock" top -b -n 1
is "$RC" 1 "a node with no agent exits 1"
like "$(cat "$ERR")" "cannot reach the agent at unix:$T/nowhere.sock" "and says so"
run env RECCE_TLS="$T/no-tls" "$RECCE" --node no-such-host.invalid top -b -n 1
is "$RC" 1 "a TLS node that cannot be reached exits 1"
like "$(cat "$ERR")" 'cannot reach the agent at no-such-host\.invalid' "and says so"
run "$RECCE" --node http://web-3 top -b -n 1
is "$RC" 2 "a node of another scheme is a usage error"
like "$(cat "$ERR")" '^recce: usage: --node takes HOST\[:PORT\] \(TLS\), unix:PATH' "which says what a node is"
run "$RECCE" --node "$NODE" record -p "$HOT" -d 0.2 -o "$T/a/x.pb.gz" -o "$T/b/x.pb.gz"
is "$RC" 2 "two -o files of one name are a usage error"
like "$(cat "$ERR")" 'two -o files with the same name cannot come back from one node' "and says why"
like "$(cat "$T/agent/audit.log")" "uid=0 pid=[0-9]+ recce record -p $HOT -d 1 -o here\\.pb\\.gz" \
	"the audit log has who ran what"

if command -v setpriv >/dev/null 2>&1; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$RECCE" --node "$NODE" top -b -n 1
	is "$RC" 1 "a user who cannot open the socket is refused"
	like "$(cat "$ERR")" 'cannot reach the agent.*Permission denied' "by the socket's mode"
else
	skip 2 "setpriv is missing"
fi

# --- bad frames close one connection -------------------------------------

for kind in garbage oversized truncated nohello; do
	is "$(python3 tests/cli/agent-frames.py "$SOCK" "$kind" 2>&1)" closed \
		"a connection sending $kind is closed"
done
run "$RECCE" --node "$NODE" report -n 1 "$T/here.pb.gz"
is "$RC" 0 "and the agent serves the next client" || show_run
ok "the agent still runs" kill -0 "$AGENT"

# --- a client killed mid-trace, a client interrupted -----------------------

spawn_recce "$T/k.out" "$T/k.err" --node "$NODE" trace -p "$CALLS" add_pair --count 0 --time 60
CLIENT=$PID
# The node's command line, as a pattern that does not match itself.
NODE_TRACE="^recce [t]race -p $CALLS add_pair"
wait_for 10 pgrep -f "$NODE_TRACE" >/dev/null || diag "the trace never started on the node"
sleep 0.5 # the client killed mid-trace: a moment of tracing, not a wait
kill -9 "$CLIENT"
wait_exit 5 "$CLIENT"
ok "the node's trace is gone within a second of its client" \
	wait_for 1 sh -c "! pgrep -f '$NODE_TRACE' >/dev/null"
ok "the target still runs" kill -0 "$CALLS"

spawn_recce "$T/i.out" "$T/i.err" --node "$NODE" record -p "$HOT" -o "$T/int.pb.gz"
CLIENT=$PID
wait_for 10 grep -q 'recording process' "$T/i.err" || diag "record never started on the node"
sleep 0.5 # interrupted mid-record: a moment of samples, not a wait
kill -INT "$CLIENT"
if wait_exit 10 "$CLIENT"; then
	is "$WAIT_RC" 0 "Ctrl-C of the client stops the record on the node, exit 0"
else
	fail "Ctrl-C of the client stops the record on the node" "still running"
fi
ok "and its profile still arrives" test -s "$T/int.pb.gz"

# --- over SSH: an sshd of the test's own on loopback ------------------------

if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; then
	mkdir -p "$T/ssh" /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/host"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/id"
	cp "$T/ssh/id.pub" "$T/ssh/authorized_keys"
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$T/ssh/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $T/ssh/host
AuthorizedKeysFile $T/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $T/ssh/sshd.pid
CONF
	spawn "$T/sshd.out" /usr/sbin/sshd -D -e -f "$T/ssh/sshd_config"
	wait_for 5 grep -q 'Server listening' "$T/sshd.out" || diag "sshd did not start: $(cat "$T/sshd.out")"
	export RECCE_SSH="ssh -i $T/ssh/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
	export RECCE_REMOTE="$RECCE"
	SSHNODE="ssh://root@127.0.0.1:$PORT"
	run "$RECCE" --node "$SSHNODE" record -p "$HOT" -d 1 -o "$T/ssh.pb.gz"
	is "$RC" 0 "record over SSH exits 0" || show_run
	like "$(cat "$ERR")" 'recce: [0-9]+ samples in [0-9.]+ s' "it prints record's summary"
	run "$RECCE" report -n 3 "$T/ssh.pb.gz"
	like "$(cat "$OUT")" 'burn_cpu' "the profile arrives, with the target's functions"
	run "$RECCE" --node "$SSHNODE" trace -p "$CALLS" add_pair --count 3
	is "$(grep -c 'add_pair(' "$OUT")" 3 "trace over SSH shows exactly 3 calls"
	run env RECCE_REMOTE=/nonexistent/recce "$RECCE" --node "$SSHNODE" top -b -n 1
	is "$RC" 1 "a node without recce exits 1"
	like "$(cat "$ERR")" 'did not answer as an agent' "and says the node did not answer as an agent"
else
	skip 6 "sshd or ssh is missing (Debian packages openssh-server, openssh-client)"
fi

kill -INT "$AGENT"
wait_exit 5 "$AGENT"
ok "Ctrl-C stops the agent, which removes its socket" test ! -e "$SOCK"

done_testing
