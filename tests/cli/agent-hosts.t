#!/bin/bash
# Two agents on two hosts: network namespaces joined by a veth pair, made
# and removed by this test (where namespaces cannot be made, two ports of
# loopback, and the TAP output says so), each listening over TLS on its
# own address. From the first host: record, top -b and trace with exact
# counts on the second; one trace on both, merged in time order; a --wrap
# set left on the second, listed, fetched and replayed with exact counts;
# a client that speaks no TLS refused there, and the next one served.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls" "$TARGETS/hot"

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

NS1=recce-h1-$$
NS2=recce-h2-$$
if ip netns add "$NS1" 2>/dev/null && netns_at_exit "$NS1" && ip netns add "$NS2" &&
	netns_at_exit "$NS2" &&
	ip link add "rv1-$$" netns "$NS1" type veth peer name "rv2-$$" netns "$NS2" &&
	ip -n "$NS1" addr add 10.213.0.1/24 dev "rv1-$$" && ip -n "$NS2" addr add 10.213.0.2/24 dev "rv2-$$" &&
	ip -n "$NS1" link set "rv1-$$" up && ip -n "$NS2" link set "rv2-$$" up &&
	ip -n "$NS1" link set lo up && ip -n "$NS2" link set lo up; then
	H1=10.213.0.1 H2=10.213.0.2 P1=7450 P2=7450
	IN1=(ip netns exec "$NS1")
	IN2=(ip netns exec "$NS2")
	diag "two hosts: network namespaces $NS1 ($H1) and $NS2 ($H2), joined by a veth pair"
else
	H1=127.0.0.1 H2=127.0.0.1 P1=$(free_port) P2=$(free_port)
	IN1=()
	IN2=()
	diag "network namespaces cannot be made here: the two hosts are two ports of loopback"
fi
N1=$H1:$P1
N2=$H2:$P2

run "$RECCE" certs init "$T/tls" --host "$H1" --host "$H2"
is "$RC" 0 "certificates for both hosts" || show_run
for h in 1 2; do
	eval "in=(\"\${IN$h[@]}\")"
	eval "addr=\$N$h"
	# shellcheck disable=SC2154
	spawn "$T/a$h.log" "${in[@]}" "$RECCE" agent --socket "$T/a$h/a.sock" --listen "$addr" \
		--tls "$T/tls" --files "$T/f$h" --allow cert:client=read,trace
done
wait_for 10 eval 'grep -q "serving on" "$T/a1.log" && grep -q "serving on" "$T/a2.log"' ||
	diag "the agents did not start: $(cat "$T/a1.log" "$T/a2.log")"
like "$(cat "$T/a2.log")" "serving on $T/a2/a.sock and on $N2 over TLS" "the second host's agent listens on its address"

# on1 ARGS...: recce on the first host, with the client's certificate.
on1() { run "${IN1[@]}" "$RECCE" --tls "$T/tls" "$@"; }

spawn_exec "$T/hot.out" "$TARGETS/hot" 60
HOT=$PID
spawn_exec "$T/calls.out" "$TARGETS/calls" 50 700 0
CALLS=$PID

on1 --node "$N2" record -p "$HOT" -d 1 -o "$T/h2.pb.gz"
is "$RC" 0 "record on the second host exits 0" || show_run
run "$RECCE" report -n 3 "$T/h2.pb.gz"
like "$(cat "$OUT")" 'burn_cpu' "its profile arrives on the first, with the target's functions"

on1 --node "$N2" top -b -n 1 -d 0.5 -p "$HOT"
is "$RC" 0 "top -b on the second host exits 0" || show_run
like "$(cat "$OUT")" 'burn_cpu' "and shows the target's function"

on1 --node "$N2" trace -p "$CALLS" add_pair --return --count 25
is "$(grep -c 'add_pair(' "$OUT")" 25 "trace on the second host shows exactly 25 calls" || show_run
is "$(grep -c 'add_pair/[0-9]* -->' "$OUT")" 25 "and their 25 returns"

on1 --node "$N1,$N2" trace -p "$CALLS" add_pair --count 30
is "$RC" 0 "one trace on both hosts exits 0" || show_run
is "$(grep -c "^$N1 [0-9:.]* .*add_pair(" "$OUT")" 30 "the first host's 30 calls"
is "$(grep -c "^$N2 [0-9:.]* .*add_pair(" "$OUT")" 30 "the second host's 30 calls"
ok "merged in time order" eval "awk '{ print \$2 }' \"$OUT\" | sort -c"
like "$(cat "$ERR")" "clocks against this one's: $N1 [-+][0-9.]+ ms \\(round trip [0-9.]+ ms\\), $N2" \
	"with each host's clock offset shown"

# A wrapped set stays on the second host until fetched.
mkdir -p "$T/here"
cd "$T/here" || exit 1
on1 --node "$N2" trace -p "$CALLS" add_pair --return --count 200 -o calls --wrap 1M,2
is "$RC" 0 "a wrapped trace on the second host exits 0" || show_run
is "$(ls "$T/here")" "" "its files do not come to the first"
ok "they are on the second, in the client's directory" test -s "$T/f2/cert-client/calls.0"
on1 --node "$N2" files
like "$(cat "$OUT")" '^calls\.0 ' "files lists them"
on1 --node "$N2" fetch calls
is "$RC" 0 "fetch exits 0" || show_run
run "$RECCE" replay "$T"/here/calls.*
is "$(grep -c 'add_pair(' "$OUT")" 200 "the fetched set replays with exactly the 200 calls"
is "$(grep -c 'add_pair/[0-9]* -->' "$OUT")" 200 "and their 200 returns"
cd "$ROOT" || exit 1

# A client that speaks no TLS gets a closed connection; the next is served.
run "${IN1[@]}" python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
try:
    s.sendall(b"\x00\x00\x00\x05hello")
    data = s.recv(4096)
except ConnectionResetError:
    data = b""
print("closed" if data == b"" or not data.startswith(b"\x00") else "answered")
' "$H2" "$P2"
like "$(cat "$OUT")" 'closed' "plain TCP to the second host is refused" || show_run
on1 --node "$N2" top -b -n 1 -d 0.3 -p "$HOT"
is "$RC" 0 "the agent there serves the next client" || show_run

ok "the targets still run" kill -0 "$CALLS" "$HOT"

done_testing
