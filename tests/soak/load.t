#!/bin/bash
# Load (`make soak`, never in `make check`: it takes minutes): recce on a
# 200-thread target, on a target creating and joining about 1,000
# threads a second, and tracing a function called hundreds of millions of
# times a second. No crash, the limits trip, the target recovers; and
# recce's memory over 60 s of `record -F 999 --call-graph dwarf` (RSS at
# the start and the end, stated, bounded).
. "$(dirname "$0")/../cli/lib.sh"
need_file "$RECCE" "$TARGETS/spinner"

# recovers NAME FILE BASE: the target is running, not stopped, at full
# speed (a tenth of BASE at least, against a hundredth when probed).
recovers()
{
	sleep 1.25
	ok "$1: the target is still running" kill -0 "$TARGET"
	isnt "$(awk '{ print $3 }' "/proc/$TARGET/stat" 2>/dev/null)" T "$1: not stopped"
	local now
	now=$(rate_min "$2" 4)
	cmp_ok "$now" '>=' "$3 / 10" "$1: at full speed a second later ($now against $3)"
}

# 200 threads spinning.
spawn "$T/wide.out" "$TARGETS/spinner" 600 200
TARGET=$PID
sleep 1.5
BASE=$(rate_min "$T/wide.out" 6)
run "$RECCE" record -p "$TARGET" -d 3 -o "$T/wide.pb.gz"
is "$RC" 0 "record of a 200-thread target exits 0" || show_run
THREADS=$(sed -n 's/.* from \([0-9]*\) threads\{0,1\},.*/\1/p' "$ERR")
cmp_ok "${THREADS:-0}" '>=' 150 "and samples most of its threads ($THREADS)"
run "$RECCE" trace -p "$TARGET" spin_step --count 0 --time 20
is "$RC" 0 "trace of the 200 threads' hot function exits 0" || show_run
like "$(cat "$ERR")" 'circuit breaker tripped' "stopped by the circuit breaker"
recovers "200 threads" "$T/wide.out" "$BASE"
kill "$TARGET"

# About 1,000 threads created and joined a second.
spawn "$T/churn.out" "$TARGETS/spinner" 600 1 2000
TARGET=$PID
sleep 1
BASE=$(rate_min "$T/churn.out" 6)
run "$RECCE" record -p "$TARGET" -d 3 -o "$T/churn.pb.gz"
is "$RC" 0 "record of a target churning threads exits 0" || show_run
like "$(cat "$ERR")" ' [1-9][0-9]* samples' "with samples"
BORN=$(grep '^rate ' "$T/churn.out" | tail -n 60 | awk '{ n += $4 } END { print n + 0 }')
diag "the target made $BORN threads in its last 3 s"
run "$RECCE" trace -p "$TARGET" brief --count 0 --limit 0 --time 3 -o "$T/churn.trc"
is "$RC" 0 "trace of the function each new thread runs (breaker off) exits 0" || show_run
run "$RECCE" replay "$T/churn.trc"
TIDS=$(grep -o '^[0-9:.]* <[0-9]*>' "$OUT" | awk '{ print $2 }' | sort -u | wc -l)
cmp_ok "$TIDS" '>=' 100 "and traces the threads created meanwhile ($TIDS threads seen)"
recovers "churn" "$T/churn.out" "$BASE"
kill "$TARGET"

# recce's memory over 60 s of dwarf sampling at 999 Hz on two threads.
spawn "$T/long.out" "$TARGETS/spinner" 600 2
TARGET=$PID
sleep 0.5
spawn_recce "$T/rec.out" "$T/rec.err" record -p "$TARGET" -F 999 --call-graph dwarf -d 60 \
	-o "$T/long.pb.gz"
REC=$PID
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$REC/status" 2>/dev/null; }
sleep 5
START=$(rss)
sleep 52
END=$(rss)
diag "recce record -F 999 --call-graph dwarf: RSS ${START} kB at 5 s, ${END} kB at 57 s"
cmp_ok "${END:-0}" '<=' "${START:-0} * 2 + 65536" "recce's memory stays bounded over 60 s"
wait_exit 30 "$REC"
is "$WAIT_RC" 0 "and the recording ends well" || cat "$T/rec.err"
kill "$TARGET"
