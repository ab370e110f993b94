#!/bin/bash
# The text people read, compared whole with tests/golden/NAME.txt: report's
# tables, trace's lines (uprobes and --fast) and stop lines, top -b and
# tasks -b. What changes from run to run (times, durations, ids, rates,
# shares of a sampled CPU) is replaced by a word first; names, counts,
# values, words, columns and their order are compared as they are. A
# change of the text on purpose: GOLDEN_UPDATE=1 rewrites the files, and
# the diff shows it.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls" "$TARGETS/hot" "$TARGETS/ev-tasks"

GOLDEN=$(cd "$(dirname "$0")/../golden" && pwd)

# golden NAME DESC: the normalised text in $T/got equals NAME's golden file.
golden()
{
	if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$T/got" "$GOLDEN/$1.txt"
	fi
	if diff -u "$GOLDEN/$1.txt" "$T/got" >"$T/diff" 2>&1; then
		pass "$2"
	else
		fail "$2" "$(cat "$T/diff")"
	fi
}

# --- report: a hand-made profile, nothing to normalise -----------------------

perl "$(dirname "$0")/mkpprof.pl" go >"$T/go.pb.gz"
for view in report: report-lines:--lines report-folded:--folded report-n1:-n\ 1; do
	name=${view%%:*}
	view=${view#*:}
	# shellcheck disable=SC2086 # the view is zero or more words
	run "$RECCE" report "$T/go.pb.gz" $view
	{ cat "$OUT"; echo "status $RC"; } >"$T/got"
	golden "$name" "report ${view:-(the default table)}: the whole text"
done
perl "$(dirname "$0")/mkpprof.pl" deep >"$T/deep.pb.gz"
run "$RECCE" report "$T/deep.pb.gz" -n 3
{ cat "$OUT"; echo "status $RC"; } >"$T/got"
golden report-deep "report of deep stacks, -n 3: the whole text"

# --- trace: calls of a target that waits for recce ---------------------------

# trace_text: the lines with their clock, thread id, durations and the
# target's pid replaced by words.
trace_text()
{
	sed -E -e 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} /TIME /' \
		-e 's/<[0-9]+>/<TID>/g' \
		-e 's/\([0-9.]+ [mun]?s\)$/(DURATION)/' \
		-e "s/process $1/process PID/g" "$OUT" "$ERR"
	echo "status $RC"
}

spawn_ready "$T/c1.out" "$TARGETS/calls" 3 go
run_go "$PID" trace -p "$PID" add_pair greet --return --count 0
trace_text "$PID" >"$T/got"
golden trace "trace --return of two functions: the lines, the stop line"

spawn_ready "$T/c2.out" "$TARGETS/calls" 3 go
run_go "$PID" trace --fast -p "$PID" add_pair greet --return --count 0
trace_text "$PID" >"$T/got"
golden trace-fast "trace --fast --return: the same lines as through the kernel"

spawn_ready "$T/c3.out" "$TARGETS/calls" 50 go
run_go "$PID" trace -p "$PID" add_pair --count 2
trace_text "$PID" >"$T/got"
golden trace-count "trace --count 2: two calls and the stop line that says why"

# --- top -b: one busy thread --------------------------------------------------

spawn "$T/hot.out" "$TARGETS/hot"
HOT=$PID
run "$RECCE" top -b -p "$HOT" -d 0.5 -n 2
# Every figure of the machine and of the samples is a word; the share of
# hot's one function is exact (it runs nothing else).
perl -pe '
	s/ up .*?, load / up UPTIME, load /;
	s/load [0-9. ]+,/load LOAD,/;
	s/[0-9.]+\s+(B|KiB|MiB|GiB|TiB)\b/SIZE/g;
	s/cpu[0-9]*\s+[0-9.]+%/CPU%/g;
	s/(us|sy)\s+[0-9.]+%/$1 PCT/g;
	s/[0-9]+ samples/N samples/;
	s/[0-9]+ csw\/s/N csw\/s/;
	s/\b'"$HOT"'\b/PID/g;
	s/(?<=\s)[0-9]+(\.[0-9]+)?(?=\s)/N/g if /^\s+PID\s+PID\s/;
	s/ +/ /g;
' "$OUT" >"$T/got"
echo "status $RC" >>"$T/got"
golden top-batch "top -b: the header, the columns, the thread's row with its hot function"
kill_quietly "$HOT"

# --- tasks -b: task types the target counted ---------------------------------

export RECCE_EVENTS_DIR="$T/shm"
mkdir -p "$RECCE_EVENTS_DIR"
spawn "$T/tasks.out" "$TARGETS/ev-tasks" loop
wait_for 20 grep -q '^ready' "$T/tasks.out" || fail "ev-tasks did not start" "$(cat "$T/tasks.out")"
LOOP=$PID
run "$RECCE" tasks -p "$LOOP" -b -n 1 -s name
# The counts of the target's fixed tasks are exact; its ticks go on, so
# their counts and every time are words.
perl -pe '
	s/^pid '"$LOOP"' /pid PID /;
	s/, [0-9.]+ s$/, T s/;
	s/^(tick\s+)[0-9]+(\s+)[0-9]+/$1N$2N/;
	s/\s+[0-9]+\.[0-9]+/ T/g;
	s/ +/ /g;
' "$OUT" >"$T/got"
echo "status $RC" >>"$T/got"
golden tasks-batch "tasks -b -s name: the columns and each task type's counts"
kill_quietly "$LOOP"

done_testing
