#!/bin/bash
# Attacks on the agent's scopes over TLS, as a client certificate that may
# only read (eve) and one that may read and trace (tom): starting a
# program (record -- CMD, record CMD, trace -- CMD) needs exec; options
# spelled as getopt takes them (-ealloc, --even alloc, --libu, --outp=)
# mean to the scope check what they mean to the command; a file written
# through the agent is a plain name, never a path; removing other users'
# event files needs admin; and nothing a client sends forges a line of
# the audit log. Then the same commands pass with the grants they need.
# Last, a leaked certificate: revoked with recce certs revoke, refused
# from the next connection on with a message that says so; a client
# --deny names refused; a revocation list that does not read refuses
# everyone. And the first attacks again between two hosts: an agent in a
# network namespace, its client in another, joined by a veth pair.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls"

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run "$RECCE" certs init "$T/tls"
for who in eve tom ops mal; do
	run "$RECCE" certs client "$who" --tls "$T/tls"
	is "$RC" 0 "certs client $who exits 0" || show_run
done
PORT=$(free_port)
spawn_recce "$T/agent.out" "$T/agent.err" agent --socket "$T/a.sock" --listen "127.0.0.1:$PORT" \
	--tls "$T/tls" --allow cert:tom=read,trace --allow cert:ops=read,exec,admin --deny cert:mal
AGENT=$PID
wait_for 10 grep -q 'serving on' "$T/agent.err" || diag "the agent did not start: $(cat "$T/agent.err")"
spawn "$T/hot.out" "$TARGETS/hot" 120
HOT=$PID
spawn "$T/calls.out" "$TARGETS/calls" 200 700 0
CALLS=$PID

# as WHO ARGS...: the command through the agent with WHO's certificate.
as()
{
	local who=$1
	shift
	run "$RECCE" --tls "$T/tls/$who" --node "127.0.0.1:$PORT" "$@"
}

# --- a program started through a reading client ---------------------------

as eve record -d 1 -o "$T/e1.pb.gz" -- sh -c "id > $T/pwned-1"
is "$RC" 1 "eve (read) may not start a program with record -- CMD: exit 1"
ok "the program never ran" test ! -e "$T/pwned-1"
like "$(cat "$ERR")" "lets cert:eve read only, and record -- CMD needs the scope exec; the agent's --allow cert:eve=read,exec would grant it" \
	"the refusal names the scope exec and the grant"
as eve record -d 1 -o "$T/e2.pb.gz" sh -c "id > $T/pwned-2"
is "$RC" 1 "nor with record CMD (no --)"
ok "that program never ran either" test ! -e "$T/pwned-2"
as tom trace 'libc:getuid' --count 1 -- sh -c "id > $T/pwned-3"
is "$RC" 1 "tom (read,trace) may not start a program with trace -- CMD"
ok "the program never ran" test ! -e "$T/pwned-3"
like "$(cat "$ERR")" "lets cert:tom read,trace only, and trace -- CMD needs the scope exec" "trace names exec too"

# --- commands by their name alone -----------------------------------------

as eve trace -p "$CALLS" add_pair --count 1
is "$RC" 1 "eve (read) may not trace a process"
like "$(cat "$ERR")" "lets cert:eve read only, and trace needs the scope trace" \
	"the refusal names the scope trace"
as tom patch -p "$CALLS" --list
is "$RC" 1 "tom (read,trace) may not patch, not even to list patches"
like "$(cat "$ERR")" "lets cert:tom read,trace only, and patch needs the scope patch" \
	"the refusal names the scope patch"

# --- options as getopt reads them ----------------------------------------

for spelling in "-ealloc" "--even=alloc" "-e alloc"; do
	# shellcheck disable=SC2086
	as eve record -p "$HOT" -d 1 $spelling -o "$T/alloc.pb.gz"
	is "$RC" 1 "eve may not sample allocations (probes) spelled '$spelling'"
	like "$(cat "$ERR")" "record --event alloc needs the scope trace" "it says the probes need trace"
done
as eve tasks --libu -p "$CALLS" -d 1
is "$RC" 1 "eve may not follow a loop's callbacks with probes, spelled --libu"
like "$(cat "$ERR")" "tasks --libuv needs the scope trace" "and is told --libuv needs trace"
as tom trace -p "$CALLS" add_pair --fas --count 1
is "$RC" 1 "tom may trace, but not write jumps into code with trace --fast (spelled --fas)"
like "$(cat "$ERR")" "trace --fast needs the scope patch" "which needs patch"
as tom record -p "$HOT" -d 1 -e alloc --fa -o "$T/fast.pb.gz"
is "$RC" 1 "tom may not write jumps into an allocator with record -e alloc --fast (spelled --fa)"
like "$(cat "$ERR")" "record --fast needs the scope patch" "which needs patch"
ok "and nothing was written" test ! -e "$T/fast.pb.gz"

# --- files written through the agent -------------------------------------

mkdir -m 0700 "$T/root-only"
as eve record -p "$HOT" -d 1 "--outp=$T/root-only/x.pb.gz"
is "$RC" 1 "an output path spelled --outp= is refused"
ok "nothing was written at that path" test ! -e "$T/root-only/x.pb.gz"
like "$(cat "$ERR")" "record --output '$T/root-only/x.pb.gz' is a path" "the refusal names the option and the path"
as ops record -p "$HOT" -d 0.5 -o "$T/good.pb.gz"
is "$RC" 0 "a profile -o FILE still comes back to the client" || show_run
as eve report "$T/good.pb.gz" --flame "$T/root-only/x.svg"
is "$RC" 1 "report --flame PATH through the agent is refused"
ok "no flamegraph was written there" test ! -e "$T/root-only/x.svg"
cp "$T/good.pb.gz" "$T/root-only/keep.pb.gz"
as eve symbolize "$T/root-only/keep.pb.gz"
is "$RC" 1 "symbolize IN, which would rewrite IN in place, is refused for a path"
ok "IN is as it was" cmp -s "$T/good.pb.gz" "$T/root-only/keep.pb.gz"

# --- shared state ----------------------------------------------------------

touch "$T/marker"
dead=$(unused_pid)
mkdir -p /dev/shm
printf 'x' > "/dev/shm/recce-$dead.events"
remove_at_exit "/dev/shm/recce-$dead.events"
as eve events --clean
is "$RC" 1 "eve may not remove every user's event files (events --clean)"
like "$(cat "$ERR")" "events --clean needs the scope admin" "which needs admin"
ok "the event file of a process that is gone is still there" test -e "/dev/shm/recce-$dead.events"

# --- the audit log ----------------------------------------------------------

as eve top -b -n 1 --json $'x\n2026-01-01T00:00:00Z cert=ops recce patch -p 1 --list'
is "$(grep -c '^2026-01-01T00:00:00Z cert=ops' "$T/audit.log")" 0 "a newline in an argument forges no line of the audit log"
like "$(cat "$T/audit.log")" "cert=eve recce top -b -n 1 --json \\\$'x\\\\x0a2026" "it is written escaped, on the client's own line"
is "$(grep -cv '^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T' "$T/audit.log")" 0 "every line of the audit log starts with its time"
like "$(cat "$T/audit.log")" "cert=eve denied recce record -d 1 -o e1.pb.gz -- sh -c \\\$'id > " \
	"a command refused for its options is written as denied"

# --- the same with the grants they need -----------------------------------

as ops record -d 1 -o "$T/exec.pb.gz" -- "$TARGETS/hot" 1
is "$RC" 0 "ops (read,exec) may record a program it starts" || show_run
ok "and gets its profile" test -s "$T/exec.pb.gz"
as ops events --clean
is "$RC" 0 "ops (admin) may clean event files" || show_run
ok "the dead process's file is gone" test ! -e "/dev/shm/recce-$dead.events"
as tom record -p "$HOT" -d 1 --even=alloc -o "$T/alloc.pb.gz"
isnt "$(cat "$ERR")" "" "tom (trace) gets past the scope check for allocations"
unlike "$(cat "$ERR")" "needs the scope" "with no refusal"

# --- a leaked certificate -------------------------------------------------

as mal top -b -n 1
is "$RC" 1 "a client --deny names is refused"
like "$(cat "$ERR")" "this agent denies cert:mal every request" "and told so"
as eve top -b -n 1
is "$RC" 0 "eve may read before her certificate is revoked" || show_run
run "$RECCE" certs revoke eve --tls "$T/tls"
is "$RC" 0 "certs revoke eve exits 0" || show_run
like "$(cat "$ERR")" "revoked eve in $T/tls/crl.pem" "it names the list it wrote"
as eve top -b -n 1
is "$RC" 1 "eve's next connection is refused"
like "$(cat "$ERR")" "refused this client's certificate \\(sslv3 alert certificate revoked\\)" \
	"the client is told its certificate was revoked"
like "$(cat "$T/agent.err")" "refused a TLS client: its certificate: certificate revoked" \
	"the agent says why it refused"
as tom top -b -n 1
is "$RC" 0 "other clients are served as before" || show_run
run "$RECCE" certs revoke eve --tls "$T/tls"
like "$(cat "$ERR")" "eve was revoked already" "revoking twice says so"
run "$RECCE" certs revoke nobody --tls "$T/tls"
is "$RC" 1 "revoking a client never made exits 1"
cp "$T/tls/crl.pem" "$T/crl.good"
echo "not a list" > "$T/tls/crl.pem"
as tom top -b -n 1
is "$RC" 1 "a revocation list that does not read refuses everyone, not no one"
like "$(cat "$T/agent.err")" "cannot read the revocation list $T/tls/crl.pem" "and the agent says which file"
cp "$T/crl.good" "$T/tls/crl.pem"

ok "the agent still runs" kill -0 "$AGENT"

# --- the same attack between two hosts: network namespaces ------------------

NS1=recce-a$$-1 NS2=recce-a$$-2
if ip netns add "$NS1" 2>/dev/null && ip netns add "$NS2" 2>/dev/null &&
	ip link add "ra$$a" type veth peer name "ra$$b" 2>/dev/null; then
	netns_at_exit "$NS1" "$NS2"
	ip link set "ra$$a" netns "$NS1" && ip link set "ra$$b" netns "$NS2"
	ip -n "$NS1" addr add 10.78.0.1/24 dev "ra$$a" && ip -n "$NS1" link set "ra$$a" up
	ip -n "$NS2" addr add 10.78.0.2/24 dev "ra$$b" && ip -n "$NS2" link set "ra$$b" up
	ip -n "$NS1" link set lo up && ip -n "$NS2" link set lo up
	run "$RECCE" certs init "$T/tls-ns" --host 10.78.0.1
	run "$RECCE" certs client eve --tls "$T/tls-ns"
	spawn "$T/ns-agent.out" ip netns exec "$NS1" "$RECCE" agent --socket "$T/ns.sock" \
		--listen 10.78.0.1:7450 --tls "$T/tls-ns"
	wait_for 10 grep -q 'serving on' "$T/ns-agent.out" || diag "the agent in $NS1 did not start"
	run ip netns exec "$NS2" "$RECCE" --tls "$T/tls-ns/eve" --node 10.78.0.1 record -d 1 -o "$T/ns.pb.gz" \
		-- sh -c "id > $T/pwned-ns"
	is "$RC" 1 "from another host, eve (read) may not start a program on the agent's" || show_run
	ok "the program never ran" test ! -e "$T/pwned-ns"
	run ip netns exec "$NS2" "$RECCE" --tls "$T/tls-ns/eve" --node 10.78.0.1 record -p "$HOT" -d 0.5 \
		-ealloc -o "$T/ns.pb.gz"
	like "$(cat "$ERR")" "record --event alloc needs the scope trace" "nor probe a process, however -e is spelled"
else
	ip netns del "$NS1" 2>/dev/null
	fail "two hosts: network namespaces cannot be made here (ip netns add, veth)"
fi

done_testing
