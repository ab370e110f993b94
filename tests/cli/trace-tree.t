#!/bin/bash
# `recce trace --tree` and `recce replay --tree`: the calls of a live
# process nested as they ran, each with its duration and value, in both
# probe mechanisms; --depth and --min-duration leave out what they say and
# recce counts it. The target (tests/targets/tree.c) makes a known tree on
# two threads: request(i) calls parse(i) (which calls tokenize(i) twice),
# slow_io(i) when i % 4 == 3 (a sleep, at least SLOW_MS long however busy
# the machine), and reply(i).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/tree" /usr/bin/redis-server /usr/bin/redis-cli /usr/bin/redis-benchmark
plan 97

FNS=(tree:request tree:parse tree:tokenize tree:slow_io tree:reply)

# The tree one thread must show for requests FIRST.. (8 of them), the
# durations taken off.
want_tree()
{
	awk -v first="$1" 'BEGIN {
		for (i = first; i < first + 8; i++) {
			printf "tree:request(i=%d) {\n", i
			printf "  tree:parse(i=%d) {\n", i
			printf "    tree:tokenize(i=%d) = %d;\n", i, 3 * i
			printf "    tree:tokenize(i=%d) = %d;\n", i, 3 * i
			printf "  } = %d; /* tree:parse */\n", i + 1
			if (i % 4 == 3)
				printf "  tree:slow_io(i=%d) = %d;\n", i, i
			printf "  tree:reply(i=%d) = %d;\n", i, i
			printf "} = %d; /* tree:request */\n", 2 * i
		}
	}'
}

# The lines of thread TID in tree output FILE, without the columns.
thread_tree()
{
	grep "^ *[0-9.]* *[a-z]* *\[ *$2\] | " "$1" | sed 's/^[^|]*| //'
}

# The thread ids of the main thread and the worker: the threads whose
# first request was i=0 and i=1000.
tids_of()
{
	MAIN=$(sed -n 's/^.*\[ *\([0-9]*\)\] | tree:request(i=0) .*/\1/p' "$1" | head -1)
	WORKER=$(sed -n 's/^.*\[ *\([0-9]*\)\] | tree:request(i=1000) .*/\1/p' "$1" | head -1)
}

want_tree 0 >"$T/main.want"
want_tree 1000 >"$T/worker.want"

# --- the whole tree, both mechanisms ------------------------------------
for mode in links events fast; do
	case $mode in
	events) export RECCE_NO_BPF=1 ;;
	*) unset RECCE_NO_BPF ;;
	esac
	extra=()
	[ "$mode" = fast ] && extra=(--fast)
	spawn_ready "$T/$mode.got" "$TARGETS/tree" 8 go 60
	P=$PID
	run_go "$P" trace "${extra[@]}" -p "$P" "${FNS[@]}" --tree --count 0 --time 60
	cp "$OUT" "$T/$mode.tree"
	is "$RC" 0 "$mode: trace --tree exits 0" || show_run
	wait_exit 60 "$P"
	like "$(cat "$T/$mode.got")" '^tree: done 16112$' "$mode: the target ran to its end"
	tids_of "$T/$mode.tree"
	is "$(thread_tree "$T/$mode.tree" "$MAIN")" "$(cat "$T/main.want")" \
		"$mode: the main thread's calls, nested, with their values"
	is "$(thread_tree "$T/$mode.tree" "$WORKER")" "$(cat "$T/worker.want")" \
		"$mode: and the worker's, apart"
	# A line that ends a call has its duration; an opening line none.
	is "$(grep -c '^ *[0-9.]* [mun]*s  \[ *[0-9]*\] | .*;' "$T/$mode.tree") $(grep -c '^  *\[ *[0-9]*\] | .* {$' "$T/$mode.tree")" \
		"$((2 * (8 * 5 + 2))) $((2 * 8 * 2))" \
		"$mode: a duration on every line that ends a call, none where one opens"
done
unset RECCE_NO_BPF

# slow_io sleeps 60 ms: its duration is at least that, and so is that of
# the request around it.
is "$(sed -n 's/^ *\([0-9.]*\) ms  .*| *tree:slow_io(.*/\1/p' "$T/links.tree" |
	awk '$1 >= 60 { n++ } END { print n + 0 }')" 4 \
	"slow_io's 4 calls on the main thread last at least the 60 ms they sleep" ||
	grep slow_io "$T/links.tree"

# --- --min-duration and --depth ------------------------------------------
# A call under 400 ms is left out with its calls, so only the slow
# requests and their slow_io stay (the fast calls take microseconds: one
# would need 400 ms of preemption inside a few instructions).
spawn_ready "$T/min.got" "$TARGETS/tree" 8 go 500
P=$PID
run_go "$P" trace --fast -p "$P" "${FNS[@]}" --tree --min-duration 400ms --count 0 --time 60
cp "$OUT" "$T/min.tree"
is "$RC" 0 "--min-duration: trace exits 0" || show_run
wait_exit 60 "$P"
MAIN=$(sed -n 's/^.*\[ *\([0-9]*\)\] | tree:request(i=3) .*/\1/p' "$T/min.tree")
is "$(thread_tree "$T/min.tree" "$MAIN" | tr '\n' '|')" \
	"tree:request(i=3) {|  tree:slow_io(i=3) = 3;|} = 6; /* tree:request */|tree:request(i=7) {|  tree:slow_io(i=7) = 7;|} = 14; /* tree:request */|" \
	"--min-duration 400ms: only the slow requests, with only slow_io under them"
is "$(grep -c '| ' "$T/min.tree")" 12 "and the same on the worker: 12 lines in all"
like "$(cat "$ERR")" '^recce: the tree shows 8 calls; 76 more are left out: shorter than --min-duration 400.00 ms$' \
	"recce counts the calls left out, and says why"

spawn_ready "$T/depth.got" "$TARGETS/tree" 8 go 0
P=$PID
run_go "$P" trace -p "$P" "${FNS[@]}" --tree --depth 1 --count 0 --time 60
cp "$OUT" "$T/depth.tree"
is "$RC" 0 "--depth 1: trace exits 0" || show_run
wait_exit 60 "$P"
tids_of "$T/depth.tree"
is "$(thread_tree "$T/depth.tree" "$MAIN" | tr '\n' ' ')" \
	"$(for i in 0 1 2 3 4 5 6 7; do printf 'tree:request(i=%d) = %d; ' $i $((2 * i)); done)" \
	"--depth 1: each request on one line, with its value"
like "$(cat "$ERR")" 'the tree shows 16 calls; 68 more are left out: deeper than --depth 1$' \
	"and the calls under them counted as left out"

# --- --slow: the flight recorder ------------------------------------------
# 2,000 requests a thread, of which two (i % 1000 == 999) sleep 300 ms:
# only their trees are shown, whole; with --keep 3, the 3 slowest.
slow_tree()
{
	printf '%s\n' "tree:request(i=$1) {" "  tree:parse(i=$1) {" \
		"    tree:tokenize(i=$1) = $((3 * $1));" "    tree:tokenize(i=$1) = $((3 * $1));" \
		"  } = $(($1 + 1)); /* tree:parse */" "  tree:slow_io(i=$1) = $1;" \
		"  tree:reply(i=$1) = $1;" "} = $((2 * $1)); /* tree:request */"
}
spawn_ready "$T/slow.got" "$TARGETS/tree" 2000 go 300 1000
P=$PID
run_go "$P" trace --fast -p "$P" "${FNS[@]}" --slow 200ms --count 0 --time 60 --limit 0 \
	--profile "$T/slow.pb.gz"
cp "$OUT" "$T/slow.tree"
cp "$ERR" "$T/slow.err"
is "$RC" 0 "--slow: trace exits 0" || show_run
wait_exit 60 "$P"
is "$(grep -c '^# tree:request lasted [0-9.]* ms on thread [0-9]*$' "$T/slow.tree")" 4 \
	"--slow 200ms: the 4 slow requests of 4,000, each titled with its duration"
MAIN=$(sed -n 's/^.*\[ *\([0-9]*\)\] | tree:request(i=999) .*/\1/p' "$T/slow.tree")
WORKER=$(sed -n 's/^.*\[ *\([0-9]*\)\] | tree:request(i=1999) .*/\1/p' "$T/slow.tree" | grep -v "^$MAIN$")
is "$(thread_tree "$T/slow.tree" "$MAIN")" "$(slow_tree 999; slow_tree 1999)" \
	"each with its whole tree, and no other call: the main thread's two"
is "$(thread_tree "$T/slow.tree" "$WORKER")" "$(slow_tree 1999; slow_tree 2999)" \
	"and the worker's two"
like "$(cat "$T/slow.err")" '^recce: 4 of the 4000 calls at the top of a thread.s tree lasted --slow 200.00 ms or longer: each is shown with the calls under it$' \
	"recce says how many of how many"

# slow_profile FILE TREE: each slow call of the profile as a line "TITLE
# SLEPT_NS WALL_NS": its time asleep under request;slow_io;nanosleep, and
# all of its time sampled.
slow_profile()
{
	run "$RECCE" report --folded --value wall "$1"
	awk '{ v = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		all[f[1]] += v
		if (s ~ /;request;slow_io;(.*;)?nanosleep;.*\[off-CPU: sleep\]$/) slept[f[1]] += v }
		END { for (t in all) printf "%s %d %d\n", t, slept[t], all[t] }' "$OUT" | sort
}
# The call's duration from its title, in ns.
title_ns() { sed -n 's/.* lasted \([0-9.]*\) ms on thread .*/\1/p' <<<"$1" | awk '{ printf "%d", $1 * 1e6 }'; }
# check_slow_profile FILE TREE WHAT ERRFILE: one call in the profile per
# slow tree, under its title, asleep at least the 300 ms slow_io sleeps,
# and no more than the call lasted but for two periods of 1/999 s: a CPU
# sample stands for the period before it, on the thread's CPU-time grid,
# so the first in a call may stand for time before the call began; and
# where its timer fired late (a busy machine's timer interrupt can), the
# grid's next point, also in the call, stands for a period more. The
# kernel's timer skips the points it missed, so never a third.
# Where recce said the kernel lost sampling records (a recce
# slowed by a sanitizer falls behind), a call may lack its samples: its
# root, or its sleep; the rest holds.
check_slow_profile()
{
	local line title slept all bad="" lost=""
	grep -q 'the kernel lost [0-9]* records of the sampling' "$4" && lost=1
	local roots titles
	roots=$(slow_profile "$1" | sed 's/ [0-9]* [0-9]*$//')
	titles=$(sed -n 's/^# \(.* lasted \)/\1/p' "$2" | awk '{ printf "slow call %d: %s\n", NR, $0 }' | sort)
	if [ -z "$lost" ]; then
		is "$roots" "$titles" "$3: one root a slow call, numbered and titled as its tree is shown" ||
			diag "recce said:" "$(cat "$4")"
	else
		is "$(comm -23 <(printf '%s\n' "$roots" | sed '/^$/d') <(printf '%s\n' "$titles"))" "" \
			"$3, sampling records lost: each root a slow call, numbered and titled as its tree is shown"
	fi
	while read -r line; do
		title=${line% * *}
		read -r slept all <<<"${line##"$title" }"
		if { [ -z "$lost" ] && [ "$slept" -lt 299000000 ]; } ||
			[ "$all" -gt $(($(title_ns "$title") + 2 * 1001002)) ]; then
			bad+="$line; "
		fi
	done < <(slow_profile "$1")
	is "$bad" "" "$3: each asleep under slow_io for its 300 ms, and no longer than it lasted"
}
check_slow_profile "$T/slow.pb.gz" "$T/slow.tree" "--slow --profile" "$T/slow.err"
like "$(cat "$T/slow.err")" 'recce: the profile of 4 slow calls: [0-9]+ samples of their threads while they ran, on the CPU and off it; wrote .*/slow.pb.gz$' \
	"recce says what the profile holds"

spawn_ready "$T/keep.got" "$TARGETS/tree" 2000 go 300 1000
P=$PID
run_go "$P" trace --fast -p "$P" "${FNS[@]}" --slow 200ms --keep 3 --count 0 --time 60 --limit 0 \
	--profile "$T/keep.pb.gz"
cp "$OUT" "$T/keep.tree"
cp "$ERR" "$T/keep.err"
is "$RC" 0 "--slow --keep 3: trace exits 0" || show_run
wait_exit 60 "$P"
is "$(sed -n 's/^# tree:request lasted \([0-9.]*\) ms.*/\1/p' "$T/keep.tree" | sort -rn -c 2>&1 && grep -c '^# tree:request lasted' "$T/keep.tree")" 3 \
	"--keep 3: the 3 slowest trees, slowest first"
like "$(cat "$T/keep.err")" 'recce: 4 of the 4000 calls .* the 3 slowest are shown \(--keep 3\)$' \
	"and recce says it kept 3 of the 4"
check_slow_profile "$T/keep.pb.gz" "$T/keep.tree" "--keep 3 --profile: the 3 kept" "$T/keep.err"
# A command recce starts: sampled from before it runs, its slow calls'
# profile as a running process's. Through uprobes, whose rings may
# overflow while the sampler reads the new program's tables (the target
# waits 500 ms first, so that they seldom do): a request whose entry or
# return may have been dropped is not shown as slow, nor made one of two.
run "$RECCE" trace "${FNS[@]}" --slow 200ms --count 0 --time 60 --limit 0 \
	--profile "$T/cmd.pb.gz" -- "$TARGETS/tree" 2000 500 300 1000
cp "$OUT" "$T/cmd.tree"
cp "$ERR" "$T/cmd.err"
is "$RC" 0 "-- CMD --slow --profile: trace exits 0" || show_run
n=$(grep -c '^# tree:request lasted [0-9.]* ms on thread [0-9]*$' "$T/cmd.tree")
if ! grep -q 'the kernel dropped [0-9]* events' "$ERR"; then
	is "$n" 4 "-- CMD --slow: the 4 slow requests" || show_run
else
	cmp_ok "$n" '<=' 4 "-- CMD --slow, events dropped: at most the 4 slow requests" || show_run
fi
check_slow_profile "$T/cmd.pb.gz" "$T/cmd.tree" "-- CMD --slow --profile" "$T/cmd.err"
# Events dropped between a call and a return: the return seen next at
# that place may be a later call's, whose entry was dropped. recce is
# stopped while the main thread runs half its requests, and rings of one
# page overflow all along: no request is paired with another's return
# (each returns 2i; before, hundreds were), those it cannot tell end
# "(return lost)".
spawn_ready "$T/drops.got" "$TARGETS/tree" 20000 go 1 1000000 half
P=$PID
RECCE_RING_PAGES=1 spawn_recce "$T/drops.out" "$T/drops.err" trace -p "$P" tree:request \
	tree:parse tree:tokenize tree:reply --tree --depth 1 --count 0 --limit 0 --time 60
R=$PID
wait_for 60 grep -q '^recce: tracing' "$T/drops.err"
kill -STOP "$R"
kill -USR1 "$P"
wait_for 60 grep -q '^tree: half$' "$T/drops.got"
kill -CONT "$R"
kill -USR1 "$P"
wait_exit 60 "$P"
wait_exit 60 "$R"
is "$WAIT_RC" 0 "requests traced while rings overflow: trace exits 0" || cat "$T/drops.err"
like "$(cat "$T/drops.err")" 'the kernel dropped [0-9]+ events' "the kernel dropped events, and recce says so"
is "$(sed -n 's/.*tree:request(i=\([0-9]*\)) = \([0-9]*\);$/\1 \2/p' "$T/drops.out" |
	awk '$2 != 2 * $1 { print; n++ } n == 3 { exit }')" "" \
	"no request is shown with another's return" || diag "$(grep -c 'return lost' "$T/drops.out") lost"
# The same with --fast: while recce is stopped, the main thread's ring
# fills in its request and parse, whose returns it drops; the thread then
# waits at its halfway mark. Those calls' ends are not known, and are
# said so: "(return lost)", never still running at exit (as a slow call
# of the flight recorder once was). (The worker thread has most often
# ended by then; if not, its calls may well run on.)
spawn_ready "$T/fdrops.got" "$TARGETS/tree" 20000 go 1 1000000 half
P=$PID
spawn_recce "$T/fdrops.out" "$T/fdrops.err" trace --fast -p "$P" tree:request tree:parse \
	tree:tokenize tree:reply --return --count 0 --limit 0 --time 0
R=$PID
wait_for 60 grep -q '^recce: tracing' "$T/fdrops.err"
kill -STOP "$R"
kill -USR1 "$P"
wait_for 60 grep -q '^tree: half$' "$T/fdrops.got"
kill -CONT "$R"
kill -INT "$R"
wait_exit 60 "$R"
is "$WAIT_RC" 0 "--fast, a ring full while its thread is in a call: trace exits 0" || cat "$T/fdrops.err"
like "$(cat "$T/fdrops.err")" 'not recorded' "recce says calls were lost"
is "$(grep -c " <$P> .*still running at exit" "$T/fdrops.out")" 0 \
	"no call of the main thread, whose returns were dropped, is said to be still running" ||
	grep 'still running at exit' "$T/fdrops.out" | head -5
like "$(grep " <$P> tree:request/1 --> " "$T/fdrops.out" | tail -1)" ' --> \(return lost\)$' \
	"the main thread's last request is said to have lost its return" || tail -5 "$T/fdrops.out"
kill -USR1 "$P"
wait_exit 60 "$P"
# A sampling ring too small for one sample (RECCE_RING_PAGES=1: a page,
# where a stack copy is 8 KiB): every sample lost, and said.
spawn_ready "$T/lost.got" "$TARGETS/tree" 8 go 100 4
P=$PID
RECCE_RING_PAGES=1 run_go "$P" trace --fast -p "$P" "${FNS[@]}" --slow 50ms --count 0 --time 60 \
	--limit 0 --profile "$T/lost.pb.gz"
is "$RC" 0 "--slow --profile whose samples are lost: trace exits 0" || show_run
wait_exit 60 "$P"
like "$(cat "$ERR")" 'recce: warning: the kernel lost [1-9][0-9]* records of the sampling when its ring was full .*: the slow calls. profile lacks the samples and waits among them' \
	"the records the kernel lost are counted and said"
like "$(cat "$ERR")" 'recce: the profile of 4 slow calls: 0 samples of their threads' \
	"and the profile holds none" || cat "$ERR"
run "$RECCE" trace -p $$ tree:request --keep 2
is "$RC" 2 "--keep without --slow: usage error"
run "$RECCE" trace -p $$ tree:request --tree --profile "$T/no.pb.gz"
is "$RC" 2 "--profile without --slow: usage error"
like "$(cat "$ERR")" 'add --slow DUR' "which says what to add"

# --- --slow on Debian's redis-server: one slow command among thousands ----
# One DEBUG SLEEP 0.3, then redis-benchmark: the only top call that lasts
# 200 ms is the call() that ran it, with debugCommand under it. The sleep
# comes first, while recce's rings are empty: right after a benchmark, a
# recce slowed by a sanitizer is still behind, and the kernel drops the
# sleep's switch from a full ring (and says so).
spawn "$T/redis.log" /usr/bin/redis-server --port 0 --unixsocket "$T/redis.sock" \
	--save '' --appendonly no --daemonize no --enable-debug-command yes
REDIS=$PID
wait_for 30 test -S "$T/redis.sock" || diag "redis-server did not start"
spawn_recce "$T/redis.slow" "$T/redis.err" trace --fast -p "$REDIS" call debugCommand \
	setCommand getCommand lookupKeyRead lookupKeyWrite setKey dbAdd --slow 200ms \
	--count 0 --time 0 --limit 0 --profile "$T/redis.pb.gz"
R=$PID
wait_for 60 grep -q '^recce: tracing' "$T/redis.err" || cat "$T/redis.err"
redis-cli -s "$T/redis.sock" debug sleep 0.3 >/dev/null
redis-benchmark -s "$T/redis.sock" -t set,get -n 5000 -c 2 -q >/dev/null 2>&1
redis-benchmark -s "$T/redis.sock" -t set,get -n 5000 -c 2 -q >/dev/null 2>&1
kill -INT "$R"
wait_exit 60 "$R"
is "$WAIT_RC" 0 "redis-server --slow: trace exits 0 at Ctrl-C"
is "$(grep -v '^#' "$T/redis.slow" | sed 's/^[^|]*| //')" \
	"$(printf '%s\n' 'redis-server:call() {' '  redis-server:debugCommand() = 0x0;' '} = 0x0; /* redis-server:call */')" \
	"the one slow command's tree, and nothing else" || cat "$T/redis.slow"
like "$(grep '^# ' "$T/redis.slow" | tail -1)" '^# redis-server:call lasted [0-9.]+ ms on thread [0-9]+$' \
	"titled with its duration"
like "$(cat "$T/redis.err")" '^recce: 1 of the [0-9]{5,} calls at the top of a thread.s tree lasted --slow 200.00 ms' \
	"1 of tens of thousands"
# Its profile: redis-server (no frame pointers) asleep in DEBUG SLEEP's
# usleep for the 300 ms asked, under call and debugCommand.
run "$RECCE" report --folded --value wall "$T/redis.pb.gz"
is "$(awk '{ v = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	if (s ~ /^slow call 1: redis-server:call lasted [0-9.]+ ms on thread [0-9]+;call;(.*;)?debugCommand;(.*;)?\[off-CPU: sleep\]$/) n += v }
	END { print (n >= 299000000) ? "asleep" : "asleep for " n " ns" }' "$OUT")" asleep \
	"redis-server --slow --profile: the slow call asleep 300 ms under call;...;debugCommand" ||
	diag "$(head -c 2000 "$OUT")" "trace said:" "$(cat "$T/redis.err")"
kill "$REDIS"

# --- replay --tree of a trace file -----------------------------------------
spawn_ready "$T/file.got" "$TARGETS/tree" 8 go 60
P=$PID
run_go "$P" trace -p "$P" "${FNS[@]}" --return --count 0 --time 60 -o "$T/tree.trace"
is "$RC" 0 "trace -o exits 0" || show_run
wait_exit 60 "$P"
run "$RECCE" replay --tree "$T/tree.trace"
is "$RC" 0 "replay --tree exits 0" || show_run
cp "$OUT" "$T/replay.tree"
tids_of "$T/replay.tree"
is "$(thread_tree "$T/replay.tree" "$MAIN")" "$(cat "$T/main.want")" \
	"replay --tree: the main thread's tree from the file"
is "$(thread_tree "$T/replay.tree" "$WORKER")" "$(cat "$T/worker.want")" \
	"and the worker's"
run "$RECCE" replay --slow 50ms --keep 1 "$T/tree.trace"
is "$(grep -c '^# tree:request lasted' "$OUT") $(grep -c '| *tree:slow_io' "$OUT")" "1 1" \
	"replay --slow --keep 1: the slowest of the 4 slow requests, with its tree"
run "$RECCE" replay --tree --depth 2 --if 'i < 1000' "$T/tree.trace"
is "$(grep -c '| ' "$OUT") $(grep -c '| *tree:tokenize' "$OUT")" "34 0" \
	"replay --tree --depth 2 --if: the main thread's requests and their calls, no tokenize"

# --- replay --report: the calls summed by function -------------------------
# Two threads of 8 requests each, every 4th sleeping 60 ms in slow_io: the
# calls are exact, request's total the longest, and the sleeps at least
# 4 x 60 ms, all under request.
run "$RECCE" replay --report "$T/tree.trace"
is "$RC" 0 "replay --report exits 0" || show_run
is "$(awk 'NR > 1 { print $NF, $5 }' "$OUT" | sort | tr '\n' ' ')" \
	"tree:parse 16 tree:reply 16 tree:request 16 tree:slow_io 4 tree:tokenize 32 " \
	"replay --report: each function's calls" || show_run
is "$(awk 'NR == 2 { print $NF }' "$OUT")" tree:request "request took the most time"
# A duration as ns: "245.31 ms" -> 245310000.
NS='function ns(v, u) { return v * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }'
ok "slow_io's total is at least its 4 sleeps of 60 ms, request's at least that" \
	awk "$NS"' $NF == "tree:slow_io" { io = ns($1, $2) } $NF == "tree:request" { rq = ns($1, $2) }
	END { exit !(io >= 240e6 && rq >= io) }' "$OUT"
ok "request's own time is under its total, the sleeps not in it" \
	awk "$NS"' $NF == "tree:request" { exit !(ns($3, $4) < ns($1, $2) - 240e6) }' "$OUT"
run "$RECCE" replay --report --if 'i < 1000' "$T/tree.trace"
is "$(awk '$NF == "tree:tokenize" { print $5 }' "$OUT")" 16 \
	"replay --report --if: the main thread's calls alone"
# The same table live, at the end of the trace, in place of the events.
spawn_ready "$T/rep.got" "$TARGETS/tree" 8 go 60
P=$PID
run_go "$P" trace -p "$P" "${FNS[@]}" --report --count 0 --time 60
is "$RC" 0 "trace --report exits 0" || show_run
is "$(awk 'NR > 1 { print $NF, $5 }' "$OUT" | sort | tr '\n' ' ')" \
	"tree:parse 16 tree:reply 16 tree:request 16 tree:slow_io 4 tree:tokenize 32 " \
	"trace --report: each function's calls, and nothing else" || show_run
run "$RECCE" trace -p "$P" tree:request --report -o "$T/no.trace"
is "$RC" 2 "trace --report -o is a usage error"
like "$(cat "$ERR")" 'recce replay --report FILE' "pointing at replay --report"
spawn_ready "$T/co.got" "$TARGETS/tree" 2 go 0
P=$PID
run_go "$P" trace -p "$P" tree:request --count 0 --time 60 -o "$T/calls-only.trace"
run "$RECCE" replay --report "$T/calls-only.trace"
is "$RC" 1 "replay --report of calls without returns exits 1"
like "$(cat "$ERR")" 'need their returns \(recce trace --return -o FILE\)' "saying what to do"

# --- a pattern over the whole executable ----------------------------------
# Among the functions 'tree:*' matches, those whose returns cannot be
# found (symbols without a size, as the C runtime's) are left out, said;
# the others are traced.
spawn_ready "$T/all.got" "$TARGETS/tree" 8 go 0
P=$PID
run_go "$P" trace -p "$P" 'tree:*' --tree --count 0 --time 60
is "$RC" 0 "'tree:*' --tree: trace exits 0" || show_run
wait_exit 60 "$P"
like "$(cat "$ERR")" 'functions are not traced: .*their returns cannot be found: .*deregister_tm_clones' \
	"the functions whose returns cannot be found are named as left out"
is "$(grep -c '^ *[0-9.]* [mun]*s  \[ *[0-9]*\] |   *tree:tokenize(i=[0-9]*) = [0-9]*;$' "$OUT")" 32 \
	"and the others are traced: tokenize's 32 calls, nested"

# --- all of libc and the executable, then recce's SIGKILL ------------------
# Thousands of functions are patched at once (libc alone has about 3,500)
# and, when recce dies mid-trace, the library's watchdog puts every byte
# back: the target's code equals its files, and it runs to its end with
# the right result.
spawn_ready "$T/kill.got" "$TARGETS/tree" 3000 go 1 4 half
P=$PID
spawn_recce "$T/kill.tree" "$T/kill.err" trace --fast -p "$P" 'libc:*' 'tree:*' --tree \
	--max-probes 100000 --count 0 --time 0 --limit 0
R=$PID
ok "whole libc: the trace starts" wait_for 120 grep -q '^recce: tracing' "$T/kill.err" ||
	cat "$T/kill.err"
N=$(sed -n 's/^recce: tracing \([0-9]*\) functions.*/\1/p' "$T/kill.err")
cmp_ok "${N:-0}" '>' 2000 "with thousands of functions patched ($N)"
kill -USR1 "$P"
# Halfway, the main thread waits: the target is there, patched.
ok "the target runs traced to its halfway mark" wait_for 120 grep -q '^tree: half$' "$T/kill.got"
ok "the tree shows the target's calls into libc" \
	wait_for 60 grep -q '^ *[0-9.]* [mun]*s  \[ *[0-9]*\] | *libc.so.6:' "$T/kill.tree"
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 1 "while the trace runs, the target's code differs from its file" || show_run
kill -KILL "$R"
wait "$R" 2>/dev/null
ok "after recce's SIGKILL, every byte is back" wait_for 60 python3 tests/cli/code-bytes.py "$P"
kill -USR1 "$P"
wait_exit 120 "$P"
is "$(grep done "$T/kill.got")" "tree: done $((2 * 3000 * 2999 + 2000 * 3000))" \
	"and the target runs on to its end with the right result"

# --- --format chrome: the live calls as nested slices ----------------------
# Each call a B at its start and an E at its end, on its thread, in one
# Trace Event document: 8 requests a thread, both threads, every call.
spawn_ready "$T/chrome.got" "$TARGETS/tree" 8 go 0
P=$PID
run_go "$P" trace --fast -p "$P" "${FNS[@]}" --format chrome --count 0 --time 60
cp "$OUT" "$T/tree.json"
is "$RC" 0 "--format chrome: trace exits 0" || show_run
wait_exit 60 "$P"
CH=$(python3 - "$T/tree.json" <<'PY' 2>&1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
calls, stack, bad = {}, {}, 0
for e in ev:
    st = stack.setdefault(e["tid"], [])
    if e["ph"] == "B":
        st.append(e["name"])
        calls[e["name"]] = calls.get(e["name"], 0) + 1
    elif e["ph"] != "E" or not st or st.pop() != e["name"]:
        bad += 1
print("calls " + " ".join("%s=%d" % (k, calls[k]) for k in sorted(calls)))
left = sum(len(s) for s in stack.values())
print("nested" if not bad and not left else "unbalanced: %d bad, %d left open" % (bad, left))
PY
)
is "$(sed -n 's/^calls //p' <<<"$CH")" "tree:parse=16 tree:reply=16 tree:request=16 tree:slow_io=4 tree:tokenize=32" \
	"--format chrome: one valid document, every call of both threads a slice" || diag "$CH"
is "$(sed -n 2p <<<"$CH")" nested "each slice ends where it began, nested as the calls ran on its thread"
run "$RECCE" trace -p $$ tree:request --format chrome --tree
is "$RC" 2 "--format chrome --tree: usage error"
run "$RECCE" trace -p $$ tree:request --format chrome -o "$T/x.trace"
is "$RC" 2 "--format chrome -o: usage error"
like "$(cat "$ERR")" 'recce replay --format chrome FILE' "saying how to make one from a file"

# --- what --tree cannot go with --------------------------------------------
run "$RECCE" trace -p $$ tree:request --depth 2
is "$RC" 2 "--depth without --tree: usage error"
like "$(cat "$ERR")" 'add --tree' "saying to add --tree"
run "$RECCE" trace -p $$ tree:request --tree -o "$T/x.trace"
is "$RC" 2 "--tree -o: usage error"
like "$(cat "$ERR")" 'recce replay --tree FILE' "saying how to see a file's tree"
run "$RECCE" trace -p $$ tree:request --tree --min-duration 5ps
is "$RC" 2 "--min-duration in an unknown unit: usage error"
