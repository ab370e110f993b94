#!/bin/bash
# Threads created during a recording are sampled too, in a launched command
# and in an attached process, and each sample keeps its thread's id and name.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/threads"

# --- record -- CMD: every thread the command creates ------------------------

P="$T/cmd.pb.gz"
run "$RECCE" record -o "$P" -- "$TARGETS/threads" 1.5
is "$RC" 0 "record -- threads exits 0" || show_run
like "$(cat "$ERR")" 'from ([5-9]|[1-9][0-9]+) threads' \
	"the summary counts the main thread, the early and the late threads"
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
like "$FOLDED" '(^|;)early_worker_spin;' "the first wave's threads are sampled"
LATE=$(folded_count "$FOLDED" '(^|;)late_worker_spin;')
cmp_ok "$LATE" '>' "$TOTAL * 0.5" \
	"the later waves' threads are sampled: most of the CPU time ($LATE of $TOTAL)"

# --- record -p PID: threads created after the attach ----------------------

spawn "$T/threads.out" "$TARGETS/threads" 1.5 --wait
TGT=$PID
# Wait until the early wave is over: only the main thread is left.
wait_for 5 grep -q 'early wave done' "$T/threads.out" || diag "the early wave did not end"
P="$T/pid.pb.gz"
spawn_recce "$T/rec.out" "$T/rec.err" record -p "$TGT" -d 10 -o "$P"
REC=$PID
recording "$T/rec.err" || diag "recce never said it records"
# The main thread alone spins while it waits: a moment of its CPU time
# recorded before the late waves start.
ran_cpu "$TGT" 20 || diag "the main thread used no CPU while recorded"
# Start the late waves now; the target says each thread's id and name.
kill -USR1 "$TGT"
wait_for 30 _gone "$TGT"
awk '$1 == "threads:" && $2 == "tid" { print $3, $4 }' "$T/threads.out" >"$T/tasks"
if wait_exit 5 "$REC"; then
	is "$WAIT_RC" 0 "record -p ends with status 0 when the process exits" ||
		diag "$(cat "$T/rec.err")"
else
	fail "record -p ends with status 0 when the process exits" "still running 5 s after the target exited"
fi
LATE_TIDS=$(awk '$2 ~ /^late-/ { print $1 }' "$T/tasks" | sort -un | paste -sd, -)
LATE_NAMES=$(awk '$2 ~ /^late-/ { print $2 }' "$T/tasks" | sort -u)
like "$(cat "$T/rec.err")" 'from ([3-9]|[1-9][0-9]+) threads' \
	"the summary counts threads created after the attach"

FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
LATE=$(folded_count "$FOLDED" '(^|;)late_worker_spin;')
# What the late threads' samples add up to: their own CPU time at 99 Hz,
# as each measured it, whatever else the machine was doing (a sample or
# two a thread is lost at its start and end).
LATE_CPU=$(awk '$2 == "cpu" && $3 ~ /^late-/ { s += $4; n++ } END { printf "%.0f %d", s * 99, n }' "$T/threads.out")
set -- $LATE_CPU
cmp_ok "$LATE" '>=' "$1 * 0.8 - 2 * $2" \
	"threads created after the attach are sampled for the CPU time they had ($LATE samples, $1 expected from $2 threads)"
like "$FOLDED" '(^|;)main_wait_spin [0-9]+$' "the main thread is sampled while it waits"
is "$(folded_count "$FOLDED" 'early_worker_spin')" 0 \
	"no samples from threads that ended before the attach"

# --tid keeps the samples of the given threads only.
FOLDED=$(folded "$P" --tid "$LATE_TIDS")
LATE_TIDS_N=$(folded_total "$FOLDED")
cmp_ok "$LATE_TIDS_N" '>=' "$LATE" "report --tid (late threads) keeps their samples"
cmp_ok "$LATE_TIDS_N" '<=' "$LATE * 1.05 + 2" "and hardly any more (thread start and exit)"
is "$(folded_count "$FOLDED" 'main_wait_spin')" 0 "and none of the main thread"
FOLDED=$(folded "$P" --tid "$TGT")
like "$FOLDED" '(^|;)main_wait_spin [0-9]+$' "report --tid MAIN keeps the main thread"
is "$(folded_count "$FOLDED" 'late_worker_spin')" 0 "and drops the late threads"
is "$(folded_total "$(folded "$P" --pid "$TGT")")" "$TOTAL" "report --pid PID keeps all of the process's samples"
is "$(folded_total "$(folded "$P" --pid 1)")" 0 "report --pid OTHER keeps none"

# Every sample carries its pid, tid and thread name as labels, for other
# pprof tools (go tool pprof -tagfocus thread=late-0).
perl tests/cli/pprof-labels.pl "$P" >"$T/labels"
is "$?" 0 "the profile's labels can be read" || diag "$(head -n 5 "$T/labels")"
is "$(awk -v p="$TGT" '$0 !~ (" pid=" p "( |$)")' "$T/labels" | wc -l)" 0 \
	"every sample has the label pid=$TGT"
is "$(grep -c -v ' tid=[0-9]' "$T/labels")" 0 "every sample has a numeric tid label"
is "$(grep -c -v ' thread=' "$T/labels")" 0 "every sample has a thread label"
LATE_LABELLED=$(awk '/ thread=late-[0-9]+( |$)/ { n += $1 } END { print n + 0 }' "$T/labels")
cmp_ok "$LATE_LABELLED" '>=' "$LATE * 0.9" \
	"the late threads' samples carry their names late-N ($LATE_LABELLED of $LATE)"
MAIN_LABELLED=$(awk -v t="$TGT" '$0 ~ (" tid=" t "( |$)") && / thread=threads( |$)/ { n += $1 } END { print n + 0 }' "$T/labels")
MAIN=$(folded_total "$(folded "$P" --tid "$TGT")")
is "$MAIN_LABELLED" "$MAIN" "the main thread's samples carry tid=$TGT and thread=threads"
# The tids of the late threads' samples are the tids the system gave them.
BAD_TIDS=$(awk '/ thread=late-/ { for (i = 2; i <= NF; i++) if ($i ~ /^tid=/) print substr($i, 5) }' "$T/labels" |
	sort -un | while read -r t; do
		grep -q "^$t late-" "$T/tasks" || echo "$t"
	done)
is "$BAD_TIDS" "" "the late threads' tid labels are their real thread ids"

done_testing
