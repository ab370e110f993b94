#!/bin/bash
# recce agent --continuous and recce query: while a target with a known
# CPU split runs under an agent with short windows, the query of the whole
# range names its functions with their shares within what sampling allows;
# a range before the target started has none of it; a process that lived
# 2 s is there, and one that exec'd has both programs named; restarting the
# agent loses at most one window, and a query over it says how long no
# window covers; every sample carries its process's labels; /metrics
# passes promtool; retention deletes old windows; a full disk keeps the
# agent alive, says so, and writing resumes when there is room.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/split" "$TARGETS/hot"

STORE=$T/store
now() { date +%s.%N; }

# start_agent N STORE ARGS...: an agent with its own socket; sets AGENT and
# HTTP (the address of /metrics, when served).
start_agent()
{
	local n=$1 store=$2
	shift 2
	spawn_recce "$T/agent$n.out" "$T/agent$n.err" agent --continuous --socket "$T/a$n/a.sock" \
		--store "$store" "$@"
	AGENT=$PID
	wait_for 15 grep -q 'profiling every process' "$T/agent$n.err" ||
		diag "agent $n did not start: $(cat "$T/agent$n.err")"
	HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent$n.err")
}

# stop_agent: Ctrl-C, as in a terminal; sets WAIT_RC.
stop_agent()
{
	kill -INT "$AGENT"
	wait_exit 10 "$AGENT" || WAIT_RC=timeout
}

# --- a run with a restart in the middle -----------------------------------

T0=$(now)
start_agent 1 "$STORE" --window 2s --rate 99 --http 127.0.0.1:0
like "$(cat "$T/agent1.err")" \
	"profiling every process at 99 Hz per CPU in windows of 2s into $STORE; metrics at http://127\\.0\\.0\\.1:[0-9]+" \
	"the agent says what it profiles, where it stores and serves"
next_window "http://$HTTP" || diag "the agent wrote no window"
BEFORE=$(now)
next_window "http://$HTTP" || diag "the window holding BEFORE was never written"
spawn "$T/split.out" "$TARGETS/split" 14
SPLIT=$PID
SPLIT_AT=$(now)
sleep 2 # hot starts past SPLIT_AT + 1.5 (the --diff below): a time apart, not a wait
spawn "$T/hot.out" "$TARGETS/hot" 2
HOT=$PID
wait_exit 10 "$HOT"
is "$WAIT_RC" 0 "the 2 s process ran to its end"

if command -v curl >/dev/null; then
	curl -sf "http://$HTTP/metrics" >"$T/metrics"
	like "$(cat "$T/metrics")" 'recce_agent_windows_written_total [1-9]' \
		"/metrics counts the windows written"
	like "$(cat "$T/metrics")" 'recce_agent_store_full 0' "and says the store has room"
	if command -v promtool >/dev/null; then
		ok "promtool accepts /metrics" promtool check metrics <"$T/metrics"
	else
		skip 1 "promtool is not installed"
	fi
	cmp_ok "$(agent_metric "http://$HTTP" profiler_resident_bytes)" '>' 1000000 \
		"/metrics gives the profiler's resident memory"
	# Binaries that come and go, as on a build host: 40 fresh copies of
	# one program (40 files), each run once. Two windows after they exit
	# the profiler closes them, all but the 16 unused it may keep.
	mkdir "$T/copies"
	for i in $(seq 40); do
		cp "$TARGETS/hot" "$T/copies/hot-$i"
		"$T/copies/hot-$i" 0.01 >/dev/null 2>&1
	done
	# And ten more deleted as soon as they end, while the profiler is
	# stopped, so that it reads their mappings after their files are
	# gone: the kernel's build-id names them (hot ran before, from its
	# own file). The profiler is the agent's one child. The ten run at
	# once, so that it is stopped briefly: meanwhile its rings fill with
	# every CPU's samples, and on a busy machine a second of them is
	# more than they hold.
	for i in $(seq 10); do cp "$TARGETS/hot" "$T/copies/gone-$i"; done
	GONE_FROM=$(now)
	PROFILER=$(pgrep -P "$AGENT")
	kill -STOP $PROFILER
	GONE=()
	for i in $(seq 10); do
		"$T/copies/gone-$i" 0.1 >/dev/null 2>&1 &
		GONE+=($!)
	done
	wait "${GONE[@]}"
	rm "$T/copies"/gone-*
	kill -CONT $PROFILER
	for i in 1 2 3; do next_window "http://$HTTP" || diag "no window $i after the copies"; done
	CLOSED=$(agent_metric "http://$HTTP" profiler_files_closed_total)
	cmp_ok "${CLOSED:-0}" '>=' 24 "the profiler closed the copies no process maps any more ($CLOSED)"
	run "$RECCE" query --store "$STORE" --from "@$GONE_FROM" --format folded
	grep '^gone-\|;gone-' "$OUT" >"$T/gone.folded"
	grep -E '(^|;)burn_cpu [0-9]+$' "$OUT" >"$T/burn.folded"
	is "$(wc -l <"$T/gone.folded")" 0 "no frame of the deleted copies is left as an address" ||
		diag "$(head -n 5 "$T/gone.folded")"
	cmp_ok "$(wc -l <"$T/burn.folded")" '>' 0 "their CPU is in burn_cpu" ||
		diag "$(agent_metric "http://$HTTP" records_lost_total) records lost; $(grep -c . "$OUT") stacks"
else
	skip 7 "curl is not installed"
fi

DOWN_FROM=$(now)
stop_agent
is "$WAIT_RC" 0 "Ctrl-C stops the agent with status 0"
start_agent 2 "$STORE" --window 2s --rate 99 --http off
DOWN_TO=$(now)
# A process that burns CPU in perl, then becomes hot by exec, inside one
# window.
spawn "$T/perl.out" perl -e '$x++ for 1 .. 3e7; exec @ARGV' "$TARGETS/hot" 1
PERL=$PID
wait_exit 20 "$PERL"
wait_exit 20 "$SPLIT"
is "$WAIT_RC" 0 "the split target ran to its end"
sleep 1
stop_agent
END=$(now)

# Windows: contiguous but for the restart: the first agent's last window
# ends when it stops, the second's first starts when it starts, so the
# one gap is no longer than the test saw the agent down.
run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --windows --json
is "$RC" 0 "query --windows exits 0" || show_run
GAP=$(perl -ne '/"start_ns":(\d+),"end_ns":(\d+)/ or next;
	$g = $1 - $e if $e && $1 - $e > $g; $e = $2; END { printf "%.3f\n", $g / 1e9 }' "$OUT")
DOWN=$(awk -v a="$DOWN_FROM" -v b="$DOWN_TO" 'BEGIN { printf "%.3f\n", b - a }')
cmp_ok "$GAP" '<=' "$DOWN" "restarting the agent lost only the time it was down (gap ${GAP}s, down ${DOWN}s)"
cmp_ok "$(grep -c start_ns "$OUT")" '>=' 8 "the windows of the run are stored"
# A window ends when its samples were read, and the next begins there: no
# two overlap, and but for the restart none leaves time out.
is "$(perl -ne '/"start_ns":(\d+),"end_ns":(\d+)/ or next;
	$n++ if $e && $1 != $e; $e = $2; END { print $n + 0 }' "$OUT")" 1 \
	"every window but the restart's begins where the one before it ended"

# The agent profiles every process: another test's split may run beside
# this one, so its pid joins the name.
run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --comm split --pid "$SPLIT" -n 0
is "$RC" 0 "query --comm split exits 0" || show_run
# total%: the functions with what they call (the clock they spin on).
A=$(awk '$4 == "work_a" { sub("%", "", $2); print $2; exit }' "$OUT")
B=$(awk '$4 == "work_b" { sub("%", "", $2); print $2; exit }' "$OUT")
N=$(query_samples "$(cat "$OUT")")
share_near "$A" 75 "$N" "work_a has 75% of the target's $N samples ($A%)"
share_near "$B" 25 "$N" "work_b has 25% ($B%)" || diag "$(cat "$OUT")"
like "$(cat "$OUT")" 'processes: 1 ' "one process of that name and pid"
like "$(cat "$OUT")" "windows: [0-9]+, [0-9.]+ s missing between them \\($(hostname)\\)" \
	"the query says how long no window covers: the restart"
like "$(cat "$ERR")" "warning: no window of $STORE covers [0-9.]+ s of the range" "and warns"

# Another test's split may have run then: this one's pid picks it out.
run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$BEFORE" --comm split --pid "$SPLIT"
is "$RC" 1 "a range before the target started has none of it"
like "$(cat "$ERR")" 'no samples in .* that match: widen --from and --to' "and says so"

run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --comm hot -n 3
like "$(cat "$OUT")" 'burn_cpu +.*hot\.c:' "the process that lived 2 s is there, named"

run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --pid "$PERL" -n 0
like "$(cat "$OUT")" 'Perl_pp_[a-z]+ +.*perl' "a process's code before its exec is named from the old program"
like "$(cat "$OUT")" 'burn_cpu +.*hot\.c:' "and after it from the new one"
# Each program's samples are labelled by it, those of the window of the
# exec too: the program before the exec is the one that ran them.
run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --pid "$PERL" --comm perl -n 0
like "$(cat "$OUT")" 'Perl_pp_[a-z]+ +.*perl' "the code before the exec is perl's"
unlike "$(cat "$OUT")" 'burn_cpu' "and none of hot's"
run "$RECCE" query --store "$STORE" --from "@$T0" --to "@$END" --pid "$PERL" --comm hot -n 0
like "$(cat "$OUT")" 'burn_cpu +.*hot\.c:' "the code after it is hot's"
unlike "$(cat "$OUT")" 'Perl_pp_' "and none of perl's"

run "$RECCE" query --store "$STORE" --from "@$SPLIT_AT" --to "@$END" --pid "$SPLIT" \
	-o "$T/split.pb.gz"
is "$RC" 0 "query -o writes a pprof profile" || show_run
perl "$(dirname "$0")/pprof-labels.pl" "$T/split.pb.gz" >"$T/labels"
# Before its exec the process was the test's forked shell, then spawn's
# setsid and env, and its samples say so.
is "$(grep -Ev "pid=$SPLIT .*comm=(bash|setsid|env) exe=/usr/bin/\1 " "$T/labels" |
	grep -vc "pid=$SPLIT .*comm=split exe=/[^ ]*/split build_id=[0-9a-f]\\{40\\}")" 0 \
	"every sample has the process's pid, comm, exe and build-id" ||
	diag "$(grep -v "comm=split exe=/[^ ]*/split build_id=" "$T/labels")"
unlike "$(cat "$T/labels")" ' image=' "the labels say the program, not the agent's count of its execs"
run "$RECCE" report "$T/split.pb.gz" -n 3
like "$(cat "$OUT")" 'work_a' "recce report reads it"

run "$RECCE" query --store "$STORE" --from "@$SPLIT_AT" --to "@$END" --comm split,hot --diff \
	--from2 "@$BEFORE" --to2 "@$(awk "BEGIN { printf \"%.3f\", $SPLIT_AT + 1.5 }")"
is "$RC" 0 "--diff compares two ranges" || show_run
like "$(cat "$OUT")" 'burn_cpu' "and shows the function that came"

run "$RECCE" query --store "$T/nowhere"
is "$RC" 1 "a directory without a store exits 1"
like "$(cat "$ERR")" "no store in $T/nowhere: start 'recce agent --continuous'" "and says what to do"
run "$RECCE" query --store "$STORE" --from yesterday
is "$RC" 2 "a time it cannot read is a usage error"
run "$RECCE" query --store "$STORE" --label colour=red
is "$RC" 2 "a label it does not know is a usage error"
run "$RECCE" agent --window 2s
is "$RC" 2 "--window without --continuous is a usage error"

# --- retention -----------------------------------------------------------

start_agent 3 "$T/ret" --window 1s --retain 3s --http 127.0.0.1:0
ok "the agent writes 6 windows" wait_for 60 eval '[ "$(windows_written "http://$HTTP")" -ge 6 ]'
stop_agent
run "$RECCE" query --store "$T/ret" --from -1h --windows --json
# After each window, those that started more than 3 s before its end go:
# what is left started within 3 s of the newest end, and that is at least
# the last 2 windows (a third starts 3 s before, give or take the
# milliseconds a window's end is late by).
RET=$(python3 -c '
import json, sys
w = [json.loads(l) for l in sys.stdin if "start_ns" in l]
end = max(x["end_ns"] for x in w)
old = [x for x in w if x["start_ns"] < end - 3 * 10**9]
print(len(w), len(old))' <"$OUT")
is "${RET#* }" 0 "--retain 3s keeps no window that started more than 3 s before the newest end ($RET)"
cmp_ok "${RET% *}" '>=' 2 "and keeps the last 2"

# --- a full disk ---------------------------------------------------------

if [ "$(id -u)" = 0 ] && mkdir "$T/tiny" && mount -t tmpfs -o size=1m tmpfs "$T/tiny"; then
	unmount_at_exit "$T/tiny"
	start_agent 4 "$T/tiny/store" --window 1s --http 127.0.0.1:0
	dd if=/dev/zero of="$T/tiny/fill" bs=4k count=1024 2>/dev/null
	ok "a full disk is said" wait_for 10 grep -q 'is full: windows are not written' "$T/agent4.err"
	ok "the agent runs on" kill -0 "$AGENT"
	if command -v curl >/dev/null; then
		like "$(curl -sf "http://$HTTP/metrics")" 'recce_agent_store_full 1' \
			"/metrics says the store is full"
	else
		skip 1 "curl is not installed"
	fi
	rm -f "$T/tiny/fill"
	ok "writing resumes when there is room" wait_for 10 grep -q 'has room again' "$T/agent4.err"
	stop_agent
	is "$WAIT_RC" 0 "and it stops with status 0"
else
	skip 5 "needs root to mount a small tmpfs"
fi

done_testing
