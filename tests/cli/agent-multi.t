#!/bin/bash
# recce --node A,B: one command on two agents at once, their outputs
# merged into one in time order, each line prefixed with its node and its
# time put on this machine's clock, with each node's clock offset measured
# and shown; exact counts from each node; -o files, which would collide,
# are refused unless their paths say {node}, as is a list with a node
# that is not one; a node that cannot be reached costs only its own
# lines. record on several nodes brings each node's profile back (by
# default, into -o DIR/, to a {node} path) or one of them all with a host
# root for each (--merge); -p comm:NAME is resolved on each node.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls" "$TARGETS/spinner"

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
is "$RC" 2 "-o of one path with two nodes is a usage error"
like "$(cat "$ERR")" "with several nodes, -o $T/both.pb.gz would come back from each to one path: put \\{node\\} in it \\(-o $T/both.\\{node\\}.pb.gz\\)" \
	"and says how to name each node's file"
run "$RECCE" --node "$N1,$N2" trace -p "$CALLS" add_pair --count 5 -o "$T/t.trace"
is "$RC" 2 "as is a trace's" || show_run

# --- trace files of several hosts, replayed --------------------------------
# Each node's file comes back stamped with its name and its clock's offset:
# replay names each line's host and puts it on this machine's clock.
# secs HH:MM:SS.ffffff: the time as seconds of the day.
secs() { awk -F: '{ printf "%.6f", $1 * 3600 + $2 * 60 + $3 }' <<<"$1"; }
hosts_out="$T/hosts.{node}.trc"
run "$RECCE" --node "$N1,$N2" trace -p "$CALLS" add_pair --count 6 -o "$hosts_out"
is "$RC" 0 "trace -o on two nodes, each its own file" || show_run
# --- record on several nodes ---------------------------------------------

# label NODE: the node as a file name has it.
label() { printf '%s' "${1#unix:}" | sed -E 's/[^A-Za-z0-9.-]+/_/g; s/^_//; s/_$//'; }
L1=$(label "$N1")
L2=$(label "$N2")

H1="$T/hosts.$L1.trc"
H2="$T/hosts.$L2.trc"
run "$RECCE" replay "$H1" "$H2"
is "$RC" 0 "replay of the two hosts' files exits 0" || show_run
is "$(grep -c "^$N1 [0-9:.]* .*add_pair(" "$OUT")" 6 "replay: node 1's calls, each line named by its host"
is "$(grep -c "^$N2 [0-9:.]* .*add_pair(" "$OUT")" 6 "and node 2's"
awk '{ print $2 }' "$OUT" >"$T/htimes"
ok "merged in time order on this machine's clock" sort -c "$T/htimes"
unlike "$(cat "$ERR")" 'not measured' "both clocks were measured: no warning"
# In JSON each event names its host; in a Chrome trace each host's
# process is one of its own, named by host and pid (both nodes traced the
# one process here: its pid alone would merge them).
run "$RECCE" replay "$H1" "$H2" --format json
is "$(grep -c "^{\"time_ns\":[0-9]*,\"host\":\"$N1\",\"pid\":$CALLS,.*\"function\":\"[^\"]*add_pair\"" "$OUT")" 6 \
	"replay --format json: node 1's calls, each with its host"
is "$(grep -c "^{\"time_ns\":[0-9]*,\"host\":\"$N2\"," "$OUT")" 6 "and node 2's"
run "$RECCE" replay "$H1" "$H2" --format chrome
is "$RC" 0 "replay --format chrome of two hosts exits 0" || show_run
is "$(python3 -c '
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
calls = collections.Counter(names.get(e["pid"], "unnamed") for e in ev if e["ph"] == "B")
for name, n in sorted(calls.items()): print(name, n)' "$OUT")" \
	"$(printf '%s pid %s 6\n' "$N1" "$CALLS" "$N2" "$CALLS")" \
	"replay --format chrome: each host's 6 calls in a process of its own, named by host and pid"
run "$RECCE" replay "$H1" "$H2" --clock "$H2=0"
before=$(grep -m1 "^$N2 " "$OUT" | awk '{ print $2 }')
run "$RECCE" replay "$H1" "$H2" --clock "$H2=2.5"
after=$(grep -m1 "^$N2 " "$OUT" | awk '{ print $2 }')
is "$(awk -v a="$(secs "$before")" -v b="$(secs "$after")" 'BEGIN { printf "%.6f", a - b }')" 2.500000 \
	"--clock FILE=2.5 against FILE=0: that host's events 2.5 s earlier, exactly"
# A file written on a host and copied here by hand: its clock is not known.
run "$RECCE" trace -p "$CALLS" add_pair --count 2 -o "$T/here.trc"
run "$RECCE" replay "$H2" "$T/here.trc"
is "$(grep -c "^$(hostname) [0-9:.]* .*add_pair(" "$OUT")" 2 "a file written here is named by this host"
like "$(cat "$ERR")" "the clock of '$T/here.trc' was not measured against this one's" \
	"and a warning says its clock was not measured, and how to move it"
run "$RECCE" replay "$T/here.trc" --clock "$T/here.trc"
is "$RC" 2 "--clock without SECONDS is a usage error"
# A copy of its own, so that comm:NAME names it alone, whatever other
# tests run beside this one (their spinners among them).
SPIN_NAME=mspin$$
cp "$TARGETS/spinner" "$T/$SPIN_NAME"
spawn_exec "$T/spin.out" "$T/$SPIN_NAME" 600 1
SPIN=$PID
ok "the spinner runs" wait_for 10 grep -q '^rate' "$T/spin.out"

# samples_of NODE: the samples NODE's record said it wrote.
samples_of() { sed -n "s|^$1: recce: \\([0-9]*\\) samples in .*|\\1|p" "$ERR"; }

mkdir "$T/w"
(cd "$T/w" && "$RECCE" --node "$N1,$N2" record -p "$SPIN" -d 1 >"$T/w.out" 2>"$T/w.err")
is "$?" 0 "record on two nodes without -o exits 0" || diag "$(cat "$T/w.err")"
is "$(cd "$T/w" && ls | sort | tr '\n' ' ')" "recce.$L1.pb.gz recce.$L2.pb.gz " \
	"each node's profile comes back here, named by its node"
for l in "$L1" "$L2"; do
	n=$(folded_total "$(folded "$T/w/recce.$l.pb.gz")")
	cmp_ok "${n:-0}" '>' 0 "$l's profile holds the spinner's samples ($n)"
done

run "$RECCE" --node "$N1,$N2" record -p "$SPIN" -d 1 -o "$T/dir/"
is "$RC" 0 "record -o DIR/ on two nodes exits 0" || show_run
is "$(ls "$T/dir" | sort | tr '\n' ' ')" "$L1.pb.gz $L2.pb.gz " "DIR is made, with a profile per node"
like "$(cat "$ERR")" "$N1: recce: wrote $T/dir/$L1.pb.gz \\(" "where each came to is said"

run "$RECCE" --node "$N1,$N2" record -p "comm:$SPIN_NAME" -d 1 --merge -o "$T/m/all.pb.gz"
is "$RC" 1 "--merge into a directory that is not there: exit 1" || show_run
like "$(cat "$ERR")" "no node's profile came back: nothing to merge" "and nothing is made up"
mkdir "$T/m"
run "$RECCE" --node "$N1,$N2" record -p "comm:$SPIN_NAME" -d 1 --merge -o "$T/m/all.pb.gz"
is "$RC" 0 "record --merge on two nodes exits 0" || show_run
like "$(cat "$ERR")" "$N1: recce: comm:$SPIN_NAME is process $SPIN" "-p comm:NAME is resolved on node 1"
like "$(cat "$ERR")" "$N2: recce: comm:$SPIN_NAME is process $SPIN" "and on node 2"
is "$(ls "$T/m")" all.pb.gz "one profile is left: the nodes' own are merged into it"
S1=$(samples_of "$N1")
S2=$(samples_of "$N2")
cmp_ok "${S1:-0}" '>' 0 "node 1 said how many samples it wrote ($S1)"
cmp_ok "${S2:-0}" '>' 0 "node 2 too ($S2)"
F=$(folded "$T/m/all.pb.gz")
is "$(folded_count "$F" "^\\[host $N1\\];")" "$S1" "node 1's samples, all of them, under its host root"
is "$(folded_count "$F" "^\\[host $N2\\];")" "$S2" "node 2's, under its own"
is "$(folded_total "$F")" "$((S1 + S2))" "and nothing else"

run "$RECCE" --node "$N1,$N2" trace -p "$SPIN" spin_step --count 3 -o "$T/t.{node}.trace"
is "$RC" 0 "a trace on two nodes with -o NAME.{node}.trace exits 0" || show_run
ok "node 1's trace file came back" test -s "$T/t.$L1.trace"
ok "node 2's too" test -s "$T/t.$L2.trace"

# One node: record without -o brings its profile back, as a local one.
mkdir "$T/one"
(cd "$T/one" && "$RECCE" --node "$N1" record -p "$SPIN" -d 1 >"$T/one.out" 2>"$T/one.err")
is "$?" 0 "record on one node without -o exits 0" || diag "$(cat "$T/one.err")"
ok "its recce.pb.gz is here" test -s "$T/one/recce.pb.gz"
kill "$SPIN"

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
