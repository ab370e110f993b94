#!/bin/bash
# recce agent --listen over TLS, with the certificates of recce certs
# (init's, a client's, a host's own made later and revoked):
# record and trace through it with the client certificate certs init made
# and with one certs client added; the audit log naming each client by its
# certificate; and refusals: a client of another CA (refused by both
# sides), TLS without a client certificate, the protocol in clear text,
# garbage, each closed before the agent says a word, while it serves the
# next good client. Two agents on two hosts: network namespaces joined by a
# veth pair, or two loopback ports where namespaces cannot be made.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls"

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run "$RECCE" certs init "$T/tls"
is "$RC" 0 "certs init exits 0" || show_run
like "$(cat "$ERR")" "made a CA, an agent certificate and a client certificate in $T/tls" "and says what it made"
is "$(stat -c %a "$T/tls") $(stat -c %a "$T/tls/ca.key") $(stat -c %a "$T/tls/client.key")" "700 600 600" \
	"the directory is 0700, the keys 0600"
run "$RECCE" certs init "$T/tls"
is "$RC" 1 "certs init of a directory with a CA exits 1"
run "$RECCE" certs client bob --tls "$T/tls"
is "$RC" 0 "certs client bob exits 0" || show_run
ok "bob's directory has ca.pem, client.pem and client.key" \
	test -f "$T/tls/bob/ca.pem" -a -f "$T/tls/bob/client.pem" -a -f "$T/tls/bob/client.key"
run openssl verify -CAfile "$T/tls/ca.pem" "$T/tls/agent.pem" "$T/tls/bob/client.pem"
is "$RC" 0 "openssl verifies both certificates against the CA" || show_run
run "$RECCE" certs init "$T/other"

PORT=$(free_port)
run "$RECCE" agent --socket "$T/x.sock" --allow bob=read
is "$RC" 2 "a grant that names no kind of client is a usage error"
like "$(cat "$ERR")" "--allow wants cert:NAME, uid:N, cert:\* or uid:\*" "saying what it wants"
printf 'cert:bob=read\ncert:eve=write\n' > "$T/bad-scopes"
run "$RECCE" agent --socket "$T/x.sock" --scopes "$T/bad-scopes"
is "$RC" 1 "a scopes file with a bad line exits 1"
like "$(cat "$ERR")" "bad-scopes:2: not WHO=SCOPES" "naming the line"
printf '# who may do what\ncert:bob=read,trace\n\n' > "$T/scopes"
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$T/a.sock" --listen "127.0.0.1:$PORT" --tls "$T/tls" \
	--scopes "$T/scopes"
AGENT=$PID
wait_for 5 grep -q 'serving on' "$T/agent.err" || diag "the agent did not start: $(cat "$T/agent.err")"
like "$(cat "$T/agent.err")" "serving on $T/a.sock and on 127.0.0.1:$PORT over TLS" "the agent says it listens over TLS"

spawn "$T/hot.out" "$TARGETS/hot" 60
HOT=$PID
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT" record -p "$HOT" -d 1 -o "$T/tls.pb.gz"
is "$RC" 0 "record over TLS exits 0" || show_run
like "$(cat "$ERR")" 'recce: [0-9]+ samples in [0-9.]+ s' "with record's summary"
run "$RECCE" report -n 3 "$T/tls.pb.gz"
like "$(cat "$OUT")" 'burn_cpu' "the profile arrives with the target's functions"

spawn_exec "$T/calls.out" "$TARGETS/calls" 50 700 0
CALLS=$PID
run "$RECCE" --tls "$T/tls/bob" --node "localhost:$PORT" trace -p "$CALLS" add_pair --count 5
is "$(grep -c 'add_pair(' "$OUT")" 5 "trace over TLS with bob's certificate shows exactly 5 calls" || show_run
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT" trace -p "$CALLS" add_pair --count 5
is "$RC" 1 "a client granted nothing may not trace: exit 1"
like "$(cat "$ERR")" "this agent lets cert:client read only, and trace needs the scope trace; the agent's --allow cert:client=read,trace would grant it" \
	"it says which scope is missing and how to grant it"
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT" tasks --libuv -p "$CALLS" -d 1
is "$RC" 1 "nor follow a loop's callbacks with probes (tasks --libuv): exit 1"
like "$(cat "$ERR")" "lets cert:client read only, and tasks --libuv needs the scope trace" "which needs the scope trace"
run "$RECCE" --tls "$T/tls/bob" --node "localhost:$PORT" patch -p "$CALLS" --list
is "$RC" 1 "bob, granted read and trace, may not patch"
like "$(cat "$ERR")" "lets cert:bob read,trace only, and patch needs the scope patch" "and is told so"
like "$(cat "$T/audit.log")" "cert=bob denied recce patch -p $CALLS --list" "the audit log records the denial"
like "$(cat "$T/audit.log")" "cert=client recce record -p $HOT" \
	"the audit log names the client by its certificate"
like "$(cat "$T/audit.log")" "cert=bob recce trace -p $CALLS add_pair --count 5" "and bob by his"

run "$RECCE" --tls "$T/other" --node "127.0.0.1:$PORT" top -b -n 1
is "$RC" 1 "a client of another CA exits 1"
like "$(cat "$ERR")" "cannot reach the agent at 127\\.0\\.0\\.1:$PORT: the agent's certificate" \
	"it does not trust the agent's certificate"
run "$RECCE" --tls "$T/tls" --node "127.0.0.1:$(free_port)" top -b -n 1
is "$RC" 1 "a port with no agent exits 1"
for kind in nocert plain garbage; do
	is "$(python3 tests/cli/agent-tls.py "$PORT" "$kind" "$T/tls/ca.pem" 2>&1)" refused \
		"a client sending $kind is refused before the agent says a word"
done
like "$(cat "$T/agent.err")" 'refused a TLS client' "the agent says so on its standard error"
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT" report -n 1 "$T/tls.pb.gz"
is "$RC" 0 "and serves the next good client" || show_run
ok "the agent still runs" kill -0 "$AGENT"
kill -INT "$AGENT"
wait_exit 5 "$AGENT"

# --- a host's own certificate, made after the CA, then revoked ------------

run "$RECCE" certs host h2 --ip 127.0.0.1 --tls "$T/tls"
is "$RC" 0 "certs host h2 exits 0" || show_run
like "$(cat "$ERR")" "made $T/tls/hosts/h2: copy its ca.pem, agent.pem and agent.key" "and says what to copy"
is "$(stat -c %a "$T/tls/hosts/h2/agent.key")" 600 "h2's key is its own, mode 0600"
isnt "$(cmp -s "$T/tls/hosts/h2/agent.key" "$T/tls/agent.key" && echo same)" same \
	"and not the key init made"
run "$RECCE" certs host h2 --ip 127.0.0.1 --tls "$T/tls"
is "$RC" 1 "a second certs host h2 exits 1"
PORT2=$(free_port)
spawn_recce "$T/h2.out" "$T/h2.err" agent --socket "$T/h2.sock" --listen "127.0.0.1:$PORT2" \
	--tls "$T/tls/hosts/h2"
H2=$PID
ok "h2's agent serves with its certificate" wait_for 10 grep -q 'serving on' "$T/h2.err" ||
	diag "$(cat "$T/h2.err")"
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT2" record -p "$HOT" -d 0.5 -o "$T/h2.pb.gz"
is "$RC" 0 "a client of the CA records through h2's agent at its address" || show_run
run env RECCE_TLS="$T/tls" "$RECCE" --node "localhost:$PORT2" top -b -n 1
is "$RC" 1 "by a name h2's certificate does not hold (localhost): exit 1"
like "$(cat "$ERR")" "the agent's certificate" "the client does not take it for that name"
run "$RECCE" certs revoke h2 --tls "$T/tls"
is "$RC" 0 "certs revoke h2 exits 0" || show_run
run env RECCE_TLS="$T/tls" "$RECCE" --node "127.0.0.1:$PORT2" top -b -n 1
is "$RC" 1 "a client whose directory holds the revocation refuses h2's agent"
like "$(cat "$ERR")" "cannot reach the agent at 127\\.0\\.0\\.1:$PORT2: .*revoked" "and says it was revoked"
kill -INT "$H2"
wait_exit 5 "$H2"

run "$RECCE" agent --socket "$T/b.sock" --listen "127.0.0.1:$PORT" --tls "$T/none"
is "$RC" 1 "--listen without certificates exits 1"
like "$(cat "$ERR")" "recce certs init $T/none" "and says how to make them"

# --- two hosts: namespaces joined by a veth pair ----------------------------

NS1=recce-t$$-a NS2=recce-t$$-b
if ip netns add "$NS1" 2>/dev/null && ip netns add "$NS2" 2>/dev/null &&
	ip link add "rv$$a" type veth peer name "rv$$b" 2>/dev/null; then
	trap 'ip netns del "$NS1" 2>/dev/null; ip netns del "$NS2" 2>/dev/null; _on_exit' EXIT
	ip link set "rv$$a" netns "$NS1" && ip link set "rv$$b" netns "$NS2"
	ip -n "$NS1" addr add 10.77.0.1/24 dev "rv$$a" && ip -n "$NS1" link set "rv$$a" up
	ip -n "$NS2" addr add 10.77.0.2/24 dev "rv$$b" && ip -n "$NS2" link set "rv$$b" up
	ip -n "$NS1" link set lo up && ip -n "$NS2" link set lo up
	run "$RECCE" certs init "$T/tls2" --host 10.77.0.1 --host 10.77.0.2
	spawn "$T/na.out" ip netns exec "$NS1" "$RECCE" agent --socket "$T/na.sock" --listen 10.77.0.1:7450 --tls "$T/tls2" \
		--allow 'cert:*=read,trace'
	NA=$PID
	spawn "$T/nb.out" ip netns exec "$NS2" "$RECCE" agent --socket "$T/nb.sock" --listen 10.77.0.2:7450 --tls "$T/tls2" \
		--allow 'cert:*=read,trace'
	NB=$PID
	wait_for 5 grep -q 'serving on' "$T/na.out" || diag "agent A did not start: $(cat "$T/na.out")"
	wait_for 5 grep -q 'serving on' "$T/nb.out" || diag "agent B did not start: $(cat "$T/nb.out")"
	pass "two hosts: network namespaces $NS1 and $NS2 joined by a veth pair"
	# From host A, the agent of host B, and back.
	run ip netns exec "$NS1" env RECCE_TLS="$T/tls2" "$RECCE" --node 10.77.0.2 record -p "$HOT" -d 0.5 -o "$T/b.pb.gz"
	is "$RC" 0 "host A records through host B's agent" || show_run
	ok "and gets the profile" test -s "$T/b.pb.gz"
	run ip netns exec "$NS2" env RECCE_TLS="$T/tls2" "$RECCE" --node 10.77.0.1 trace -p "$CALLS" add_pair --count 3
	is "$(grep -c 'add_pair(' "$OUT")" 3 "host B traces through host A's agent, exactly 3 calls" || show_run
	run ip netns exec "$NS1" env RECCE_TLS="$T/tls2" "$RECCE" --node 10.77.0.2:7451 top -b -n 1
	is "$RC" 1 "a port host B does not serve exits 1"
else
	ip netns del "$NS1" 2>/dev/null
	skip 6 "network namespaces cannot be made here (ip netns); the loopback tests above stand for two hosts"
fi

done_testing
