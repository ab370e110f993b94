#!/bin/bash
# recce --node A,B: one command on two agents at once, their outputs
# merged into one in time order, each line prefixed with its node and its
# time put on this machine's clock, with each node's clock offset measured
# and shown; exact counts from each node; -o files, which would collide,
# are refused, as is a list with a node that is not one; a node that
# cannot be reached costs only its own lines.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

N1="unix:$T/a1/a.sock"
N2="unix:$T/a2/a.sock"
spawn_recce "$T/a1.out" "$T/a1.err" agent --socket "$T/a1/a.sock" --files "$T/f1"
A1=$PID
spawn_recce "$T/a2.out" "$T/a2.err" agent --socket "$T/a2/a.sock" --files "$T/f2"
A2=$PID
wait_for 5 test -S "$T/a1/a.sock" -a -S "$T/a2/a.sock" || diag "the agents did not start"

spawn_exec "$T/calls.out" "$TARGETS/calls" 50 700 0
CALLS=$PID
run "$RECCE" --node "$N1,$N2" trace -p "$CALLS" add_pair --count 40
is "$RC" 0 "a trace on two nodes exits 0" || show_run
like "$(cat "$ERR")" "clocks against this one's: $N1 [-+][0-9.]+ ms \\(round trip [0-9.]+ ms\\), $N2 [-+][0-9.]+ ms" \
	"each node's clock offset is measured and shown"
# Both agents run on this machine's clock: each offset measured is within
# half its round trip of the true one, 0 (give or take 0.2 ms, for what
# the clocks of two virtual CPUs may differ by).
ok "the offsets are within half their round trips of 0 (same clock)" perl -e '
	my $n = 0;
	while (<STDIN>) {
		next unless /clocks against/;
		while (/([-+][0-9.]+) ms \(round trip ([0-9.]+) ms\)/g) {
			exit 1 if abs($1) > $2 / 2 + 0.2;
			$n++;
		}
	}
	exit($n == 2 ? 0 : 1)' <"$ERR" || diag "$(grep 'clocks against' "$ERR")"
is "$(grep -c "^$N1 [0-9:.]* .*add_pair(" "$OUT")" 40 "node 1's 40 calls, each line named by its node"
is "$(grep -c "^$N2 [0-9:.]* .*add_pair(" "$OUT")" 40 "node 2's 40 calls"
awk '{ print $2 }' "$OUT" | grep -E '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}$' >"$T/times"
is "$(wc -l <"$T/times")" 80 "every line has its time"
ok "merged in time order" sort -c "$T/times"
like "$(cat "$ERR")" "$N1: recce: stopped after 40 events" "each node's messages come through, named"

run "$RECCE" --node "$N1,$N2" record -p "$CALLS" -d 1 -o "$T/both.pb.gz"
is "$RC" 2 "-o with two nodes is a usage error"
like "$(cat "$ERR")" 'with several nodes, -o files would come back from each to one path' "and says why"

run "$RECCE" --node "$N1,ftp://web-3" trace -p "$CALLS" add_pair --count 5
is "$RC" 2 "a list with a node of another scheme is a usage error"
like "$(cat "$ERR")" '^recce: usage: --node takes' "which says what a node is"
is "$(wc -c <"$OUT")" 0 "and nothing ran on the good one"

run "$RECCE" --node "$N1,unix:$T/nowhere.sock" trace -p "$CALLS" add_pair --count 5
is "$RC" 1 "a node that cannot be reached: exit 1"
is "$(grep -c "^$N1 .*add_pair(" "$OUT")" 5 "and the other node's lines all arrive"
like "$(cat "$ERR")" "unix:$T/nowhere.sock: recce: cannot reach the agent" "the unreachable one says so"

ok "the target still runs" kill -0 "$CALLS"
kill -INT "$A1" "$A2"
wait_exit 10 "$A1"
wait_exit 10 "$A2"
is "$WAIT_RC" 0 "the agents stop with status 0"

done_testing
