#!/bin/bash
# `recce record -p PID`: attach to a running program, sample it, detach, and
# leave it running and unaffected; Ctrl-C ends a recording and still writes
# the profile.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

# The target's output without recce (its checksum does not depend on how
# long it runs).
run "$TARGETS/hot" 0.3
WANT_OUT=$(cat "$OUT")

spawn_exec "$T/hot.out" "$TARGETS/hot"
HOT=$PID

P="$T/pid.pb.gz"
not_sampling()
{
	! has_perf_events "$1"
}
S0=$(date +%s.%N)
# Sampled per thread here: the samples are then exactly the periods the
# threads' own events counted (per CPU, the default, they are a sample of
# them: see brief below).
spawn_recce "$T/rec.out" "$T/rec.err" record -p "$HOT" --per-thread -d 2 -o "$P"
REC=$PID
wait_for 5 has_perf_events "$REC" || diag "recce never opened a perf event"
wait_for 10 not_sampling "$REC"
wait_exit 10 "$REC" || WAIT_RC="still running after 10 s"
ELAPSED=$(awk -v a="$S0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
cp "$T/rec.err" "$ERR"
is "$WAIT_RC" 0 "record -p PID -d 2 exits 0" || diag "$(cat "$ERR")"
cmp_ok "$ELAPSED" '>=' 1.9 "it records for the 2 s asked (${ELAPSED}s)"
N=$(summary_samples)
# The kernel's cpu-clock events count the CPU time the samples stand
# for, one a period of 1/99 s: each event (one per thread and CPU) ends
# with a part of a period that took no sample, so the samples are the
# periods counted, or up to one an event fewer. Exact however busy the
# machine is.
CPUT=$("$RECCE" report -n 1 "$P" 2>/dev/null | sed -n 's/^cpu-time: \([0-9.]*\) s on a CPU while sampled$/\1/p')
EVENTS=$(($(ls /proc/"$HOT"/task | wc -l) * $(nproc)))
WANT=$(awk -v c="${CPUT:-0}" 'BEGIN { printf "%d", c * 99 }')
ok "the samples are the target's CPU time while sampled x 99 Hz ($N, $WANT from ${CPUT}s, less $EVENTS at most)" \
	awk -v n="${N:-0}" -v w="$WANT" -v e="$EVENTS" 'BEGIN { exit !(n > 0 && n <= w + 1 && n >= w - e - 1) }'
like "$(cat "$ERR")" "^recce: recording process at 99 Hz" "recce says it is recording"
unlike "$(cat "$ERR")" 'never sampled' "and not that its samples fall short of its CPU time"
# It stops because its 2 s are up, and says so: how long it then takes
# to write the profile depends on the machine, and is make bench's.
run "$RECCE" report -n 1 "$P"
like "$(cat "$OUT")" '^stopped-by: duration' "and stops when the 2 s are up (${ELAPSED}s in all)"

ok "the target is still running after recce detached" kill -0 "$HOT"
STATE=$(awk '{ print $3 }' "/proc/$HOT/stat" 2>/dev/null)
like "$STATE" '^[RS]$' "and it is not left stopped (state $STATE)"
# It keeps getting CPU time after the detach.
T0=$(awk '{ print $14 }' "/proc/$HOT/stat")
ran_since() { [ "$(awk '{ print $14 }' "/proc/$HOT/stat")" -gt "$T0" ]; }
ok "and it keeps running on the CPU (past $T0 ticks)" wait_for 30 ran_since

kill -TERM "$HOT"
if wait_exit 5 "$HOT"; then
	is "$WAIT_RC" 0 "the target exits normally when asked to"
else
	fail "the target exits normally when asked to" "it did not exit within 5 s of SIGTERM"
fi
is "$(grep checksum "$T/hot.out")" "$WANT_OUT" "its checksum output is the same as without recce"

FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "burn_cpu is the leaf of most samples ($BURN of $TOTAL)"
like "$FOLDED" '(^|;)main;burn_cpu [0-9]+$' "with main as its caller"

# Ctrl-C (SIGINT to recce) ends a recording without -d, and the profile is
# still written.
spawn "$T/hot2.out" "$TARGETS/hot"
HOT2=$PID
P2="$T/int.pb.gz"
spawn_recce "$T/int.out" "$T/int.err" record -p "$HOT2" -o "$P2"
REC=$PID
if recording "$T/int.err"; then
	ran_cpu "$HOT2" 30 || diag "the target used no CPU while recorded"
	kill -INT "$REC"
	if wait_exit 5 "$REC"; then
		is "$WAIT_RC" 0 "SIGINT ends record -p PID (no -d) with status 0"
	else
		fail "SIGINT ends record -p PID (no -d) with status 0" "still running 5 s after SIGINT"
	fi
else
	fail "SIGINT ends record -p PID (no -d) with status 0" "recce never said it records" \
		"$(cat "$T/int.err")"
fi
ok "the profile is written after SIGINT" gzip -t "$P2"
like "$(cat "$T/int.err")" 'recce: [0-9]+ samples' "and the summary line is printed"
like "$(folded "$P2")" '(^|;)burn_cpu [0-9]+$' "and it names burn_cpu"
ok "the target survives recce's SIGINT" kill -0 "$HOT2"

# Two processes at once: each sample keeps its pid, and --pid picks one.
spawn "$T/a.out" "$TARGETS/hot"
A=$PID
spawn "$T/b.out" "$TARGETS/hot"
B=$PID
P3="$T/two.pb.gz"
# Until each has run 30 ticks while recorded (a second by the clock left
# A without CPU once, on a loaded machine), then Ctrl-C.
spawn_recce "$T/two.out" "$T/two.err" record -p "$A,$B" -o "$P3"
REC=$PID
recording "$T/two.err" || diag "recce never said it records"
ran_cpu "$A" 30 || diag "process A used no CPU while recorded"
ran_cpu "$B" 30 || diag "process B used no CPU while recorded"
kill -INT "$REC"
wait_exit 60 "$REC"
is "$WAIT_RC" 0 "record -p A,B exits 0" || cat "$T/two.err"
like "$(cat "$T/two.err")" 'recording processes' "recce says it records the processes"
TOTAL=$(folded_total "$(folded "$P3")")
NA=$(folded_total "$(folded "$P3" --pid "$A")")
NB=$(folded_total "$(folded "$P3" --pid "$B")")
# How the CPU is shared between them depends on what else runs (a loaded
# run gave B 9 of 44): each has some, and every sample is one of theirs.
cmp_ok "$NA" '>' 0 "process A has samples of its own ($NA of $TOTAL)"
cmp_ok "$NB" '>' 0 "process B has samples of its own ($NB of $TOTAL)"
is "$((NA + NB))" "$TOTAL" "every sample is one of the two processes'"
is $((NA + NB)) "$TOTAL" "every sample belongs to A or B"
run "$RECCE" report "$P3"
like "$(cat "$OUT")" "^pid: $A\$" "the report's header lists PID $A"
like "$(cat "$OUT")" "^pid: $B\$" "and PID $B"
kill -TERM "$A" "$B"

# A child process forked after the attach is recorded too: sh waits on a
# FIFO, then forks hot.
mkfifo "$T/go"
spawn "$T/sh.out" sh -c 'read x <"$1"; "$2" 1; true' sh "$T/go" "$TARGETS/hot"
SH=$PID
spawn_recce "$T/child.out" "$T/child.err" record -p "$SH" -d 10 -o "$T/child.pb.gz"
REC=$PID
recording "$T/child.err" || diag "recce never said it records"
echo go >"$T/go"
if wait_exit 10 "$REC"; then
	is "$WAIT_RC" 0 "record -p SHELL ends with status 0 when the shell exits" ||
		diag "$(cat "$T/child.err")"
else
	fail "record -p SHELL ends with status 0 when the shell exits" "still running after 10 s"
fi
FOLDED=$(folded "$T/child.pb.gz")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_cpu$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "the child forked after the attach is recorded ($BURN of $TOTAL)"

# A program whose work is done by threads of 8 ms of CPU each, as a server
# that starts a thread per request. Every CPU is sampled at 99 Hz and the
# target's samples kept, so each thread is sampled as it runs, however
# short; hot spins beside it, and none of its samples is kept.
spawn "$T/brief.out" "$TARGETS/brief" 600 # killed below
BRIEF=$PID
spawn "$T/neighbour.out" "$TARGETS/hot" # killed below
NEIGHBOUR=$PID
wait_for 10 grep -q '^ready' "$T/brief.out" || diag "brief did not start"
run "$RECCE" record -p "$BRIEF" -d 2 -o "$T/brief.pb.gz"
is "$RC" 0 "brief threads: record exits 0" || show_run
cp "$ERR" "$T/brief.err"
F=$(folded "$T/brief.pb.gz")
BW=$(folded_count "$(folded_user "$F")" '(^|;)brief_work$')
cmp_ok "$BW" '>' 0 "brief threads: brief_work is sampled ($BW)"
is "$(folded_count "$F" '(^|;)burn_cpu(;|$)')" 0 "brief threads: no sample of the process beside them" ||
	diag "$(folded_top "$F" 3)"
like "$(cat "$T/brief.err")" 'recce: [0-9]+ samples in [0-9.]+ s \([0-9.]+/s; 99 Hz requested per CPU\) from [0-9]+ threads' \
	"brief threads: the run says every CPU was sampled" || diag "$(cat "$T/brief.err")"
unlike "$(cat "$T/brief.err")" 'never sampled|the target was idle' "brief threads: and says nothing of unsampled threads"
kill -TERM "$NEIGHBOUR"
# --per-thread: each thread sampled by its own CPU time, where a sampling
# period at 99 Hz is 10.1 ms and no thread of brief lives that long. recce
# says the samples fall short of the CPU time the process counted, and
# why, rather than that the target was idle.
run "$RECCE" record -p "$BRIEF" --per-thread -d 2 -o "$T/brief-threads.pb.gz"
is "$RC" 0 "brief threads, --per-thread: record exits 0" || show_run
like "$(cat "$ERR")" 'recce: warning: the target used [0-9]+\.[0-9]+ s of CPU while recorded, and its samples stand for [0-9]+\.[0-9]+ s: its threads that end before their CPU time adds up to a sampling period \(10\.1 ms at -F 99\) are never sampled, .*; without --per-thread every CPU is sampled instead, and every thread with it; or a higher -F \(-F 999 samples those of 1 ms and more\) helps' \
	"brief threads, --per-thread: recce says its samples fall short of the CPU time, and why" || show_run
unlike "$(cat "$ERR")" 'the target was idle' "brief threads, --per-thread: and not that the target was idle"
kill -TERM "$BRIEF"
run "$RECCE" record --per-thread -a -d 1
is "$RC" 2 "--per-thread without -p or a command: usage error"
like "$(cat "$ERR")" '--per-thread says how the CPU samples of -p PID or of a command are taken' "saying what it is for"

done_testing
