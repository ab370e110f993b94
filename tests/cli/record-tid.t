#!/bin/bash
# record -t TID samples that thread only, as perf record -t does: the other
# threads of its process, busy as they are, are not in the profile. A TID
# that is not running is an error; -t with -p is a usage error.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/topmix"

spawn "$T/mix.out" "$TARGETS/topmix" 30
MIX=$PID
wait_for 5 grep -q 'topmix: ready' "$T/mix.out" || diag "topmix never got ready"
kill -USR1 "$MIX"
wait_for 5 grep -q 'topmix: late started' "$T/mix.out" || diag "the late thread never started"
tid_named()
{
	local t
	for t in /proc/"$MIX"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] && echo "${t##*/}"
	done
}
BUSY=$(tid_named busy)
LATE=$(tid_named late)
diag "topmix $MIX: busy $BUSY, late $LATE"

P="$T/busy.pb.gz"
run "$RECCE" record -t "$BUSY" -d 1 -o "$P"
is "$RC" 0 "record -t BUSY exits 0" || show_run
like "$(cat "$ERR")" "recording thread at 99 Hz" "it says it records one thread"
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
# Sampled at all: on a busy machine a spinning thread may run for only a
# few of the samples' 10 ms in a second.
cmp_ok "$TOTAL" '>' 0 "the busy thread is sampled ($TOTAL samples)"
is "$(folded_count "$FOLDED" '(^|;)busy_spin(;|$)')" "$TOTAL" "every sample is in busy_spin or below it"
is "$(folded_count "$FOLDED" 'late_spin')" 0 "the late thread, as busy, is not sampled"
is "$(folded_total "$(folded "$P" --tid "$BUSY")")" "$TOTAL" "every sample has tid $BUSY"
run "$RECCE" report "$P"
is "$(grep -c "^pid: $MIX\$" "$OUT")" 1 "the header names the process"
is "$(grep -c "^tid: $BUSY\$" "$OUT")" 1 "and the thread"

# Both threads, by --tid's long form and a list.
run "$RECCE" record --tid "$BUSY,$LATE" -d 1 -o "$T/both.pb.gz"
is "$RC" 0 "record --tid BUSY,LATE exits 0" || show_run
FOLDED=$(folded "$T/both.pb.gz")
cmp_ok "$(folded_count "$FOLDED" 'busy_spin')" '>' 0 "busy_spin is sampled"
cmp_ok "$(folded_count "$FOLDED" 'late_spin')" '>' 0 "late_spin is sampled"
ok "topmix still runs" kill -0 "$MIX"

GONE=$(unused_pid)
run "$RECCE" record -t "$GONE" -d 1 -o "$T/gone.pb.gz"
is "$RC" 1 "record -t with no such thread: exit 1"
like "$(cat "$ERR")" "no thread with TID $GONE" "the message names the TID"
ok "and writes no profile" test ! -e "$T/gone.pb.gz"
run "$RECCE" record -t "$BUSY" -p "$MIX" -d 1 -o "$T/x.pb.gz"
is "$RC" 2 "-t with -p: usage error"
like "$(cat "$ERR")" "give one of -p PID, -t TID, -a or a command" "the message says why"
# trace's --time read as record's --timeline, and its value as a command.
run "$RECCE" record -p "$MIX" --time 3 -o "$T/x.pb.gz"
is "$RC" 2 "-p with a stray word: usage error"
like "$(cat "$ERR")" "'3' reads as a command to run, beside -p" "the message names the word taken for a command"
run "$RECCE" record -t abc -d 1
is "$RC" 2 "-t abc: usage error"
like "$(cat "$ERR")" "-t wants a thread id" "the message names -t"

done_testing
