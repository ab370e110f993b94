#!/bin/bash
# librecce and `recce events`: exact counts of events from several
# threads, read live; a ring that overwrote its oldest events and the
# exact count lost; a reader attached mid-run and detached, the program
# unharmed; the file a SIGKILL or a SIGSEGV left, read by --postmortem; a
# clean exit; fork and exec; saved files read back; damaged files refused;
# the same from C++ (spans ended by unwinding), Go (cgo) and a program
# that dlopens the library as a Rust crate would.
. "$(dirname "$0")/lib.sh"
# librecce as built beside the targets.
LIBDIR=$(cd "$TARGETS/../lib" && pwd)
need_file "$RECCE" "$TARGETS/ev-burst" "$TARGETS/ev-throws" "$TARGETS/ev-dlopen" "$LIBDIR/librecce.a"

# Lines of JSON output ($OUT) of a kind and name, on threads matching $3.
count()
{
	grep -c "\"kind\":\"$1\",\"name\":\"$2\".*\"thread\":\"$3" "$OUT"
}

ready()
{
	grep -q '^ready' "$1"
}

# --- The default place, several threads, exact counts ----------------------
spawn "$T/burst.out" "$TARGETS/ev-burst" 4 1000
wait_for 10 ready "$T/burst.out" || fail "ev-burst did not start" "$(cat "$T/burst.out")"
is "$(awk '/^ready/ { print $2 }' "$T/burst.out")" "/dev/shm/recce-$PID.events" \
	"the file is /dev/shm/recce-PID.events"
remove_at_exit "/dev/shm/recce-$PID.events"
ok "mode 0600" test "$(stat -c %a "/dev/shm/recce-$PID.events")" = 600
run "$RECCE" events -p "$PID" --format json
is "$RC" 0 "events -p exits 0" || show_run
is "$(count event tick worker-)" 4000 "exactly 4 x 1000 tick events"
for w in 1 2 3 4; do
	is "$(count event tick "worker-$w\"")" 1000 "worker-$w: 1000 ticks" || break
done
is "$(count span_end work worker-)" 4 "4 spans ended"
is "$(grep -c '"kind":"counter","name":"done".*"value":1000' "$OUT")" 4 \
	"4 counters done = 1000"
is "$(count event all_done ev-burst)" 1 "the main thread's all_done"
like "$(cat "$ERR")" "4013 events from 5 threads of pid $PID \\(ev-burst\\)" \
	"the summary counts events and threads"
unlike "$(cat "$ERR")" "lost" "nothing lost"
ok "times are in order" sh -c "sed 's/.*\"time_ns\":\\([0-9]*\\).*/\\1/' '$OUT' | sort -c -n"
dur=$(grep '"span_end"' "$OUT" | head -1 | sed 's/.*"duration_ns":\([0-9]*\).*/\1/')
ok "a span end carries its duration ($dur ns)" test "${dur:-0}" -gt 0

run "$RECCE" events -p "$PID"
is "$RC" 0 "text output exits 0"
like "$(sed -n 2p "$OUT")" '^ +[0-9]+\.[0-9]{6} +[0-9]+ worker-[1-4] +> work$' \
	"text: a span begins with >"
like "$(grep -m1 ' < work' "$OUT")" '< work  [0-9.]+ (ns|us|ms)$' "text: its end with the duration"
like "$(grep -m1 'tick' "$OUT")" '^ +[0-9.]+ +[0-9]+ worker-[1-4] +  \* tick$' \
	"text: an event inside it is indented"
like "$(grep -m1 ' # done' "$OUT")" '# done = 1000$' "text: a counter with its value"
kill_quietly "$PID"

export RECCE_EVENTS_DIR="$T/shm"
mkdir -p "$RECCE_EVENTS_DIR"

# --- Overwrite: exact lost count ---------------------------------------------
RECCE_RING_EVENTS=64 spawn "$T/small.out" "$TARGETS/ev-burst" 2 1000
wait_for 10 ready "$T/small.out" || fail "ev-burst did not start"
run "$RECCE" events -p "$PID" --format json
is "$RC" 0 "events from small rings exits 0"
is "$(count event tick worker-1)" 62 "worker-1's ring holds its last 64 records: 62 ticks"
is "$(count span_end work worker-2)" 1 "and the span's end"
like "$(cat "$ERR")" "thread [0-9]+ \\(worker-1\\): 939 events lost, overwritten" \
	"exactly 1003 - 64 = 939 lost, said per thread"
like "$(cat "$ERR")" "RECCE_RING_EVENTS" "and how to lose none"
kill_quietly "$PID"

# --- A reader attached mid-run, detached; the program goes on ----------------
spawn "$T/beat.out" "$TARGETS/ev-burst" 1 10 beat
wait_for 10 ready "$T/beat.out" || fail "ev-burst beat did not start"
run "$RECCE" events -p "$PID" -d 1 --format json
is "$RC" 0 "events -d 1 exits 0"
is "$(count event tick worker-1)" 10 "it saw the recent past: the 10 ticks before it attached"
n1=$(count event beat ev-burst)
ok "and the beats that came while it read ($n1)" test "$n1" -gt 100
unlike "$(cat "$ERR")" "lost" "losing none while following"
ok "the program runs on after the reader left" kill -0 "$PID"
# more_beats: a reader now sees more beats than the first one did.
more_beats()
{
	run "$RECCE" events -p "$PID" --format json
	[ "$(count event beat ev-burst)" -gt "$n1" ]
}
ok "a second reader sees beats that came after (more than $n1)" wait_for 30 more_beats
kill_quietly "$PID"

# --- SIGKILL, SIGSEGV: the flight recorder -----------------------------------
spawn "$T/kill.out" "$TARGETS/ev-burst" 3 100
wait_for 10 ready "$T/kill.out" || fail "ev-burst did not start"
killed=$PID
kill_quietly "$killed"
wait_for 5 _gone "$killed"
run "$RECCE" events --postmortem "$killed"
is "$RC" 0 "--postmortem of a SIGKILLed process exits 0" || show_run
for w in 1 2 3; do
	like "$(grep "worker-$w" "$OUT" | tail -1)" "< work" "worker-$w's last event: its span's end" || break
done
like "$(tail -1 "$OUT")" "ev-burst +\\* all_done$" "the main thread's last: all_done"
is "$(grep -c "worker-1" "$OUT")" 20 "20 events a thread by default"
like "$(cat "$ERR")" "did not exit cleanly" "it says the process did not exit cleanly"
run "$RECCE" events --postmortem "$killed" --last 1 --format json
is "$(wc -l <"$OUT")" 4 "--last 1: one event for each of the 4 threads"

spawn "$T/crash.out" "$TARGETS/ev-burst" 1 5 crash
{
	wait_for 5 _gone "$PID"
	wait "$PID"
} 2>/dev/null
run "$RECCE" events --postmortem "$PID" --last 1
like "$(grep ev-burst "$OUT")" "about_to_crash" "after a SIGSEGV: the event before the crash"

crashed=$PID
spawn "$T/live.out" "$TARGETS/ev-burst" 1 5
wait_for 10 ready "$T/live.out" || fail "ev-burst did not start"
run "$RECCE" events --clean
is "$RC" 0 "--clean exits 0"
like "$(cat "$ERR")" "removed [0-9]+ event files of processes that no longer run" "--clean says what it did"
ok "the files the SIGKILL and the SIGSEGV left are gone" \
	test ! -e "$RECCE_EVENTS_DIR/recce-$killed.events" -a ! -e "$RECCE_EVENTS_DIR/recce-$crashed.events"
ok "a running process's file stays" test -e "$RECCE_EVENTS_DIR/recce-$PID.events"
kill_quietly "$PID"

# --- A clean exit removes the file unless kept -------------------------------
run "$TARGETS/ev-burst" 1 5 exit
pid=$(awk '/^ready/ { print $2 }' "$OUT" | sed 's/.*recce-\([0-9]*\).*/\1/')
ok "a clean exit removes the file" test ! -e "$RECCE_EVENTS_DIR/recce-$pid.events"
run "$RECCE" events --postmortem "$pid"
is "$RC" 1 "--postmortem of a removed file exits 1"
like "$(cat "$ERR")" "RECCE_KEEP=1" "and says how to keep it"
RECCE_KEEP=1 run "$TARGETS/ev-burst" 1 5 exit
pid=$(awk '/^ready/ { print $2 }' "$OUT" | sed 's/.*recce-\([0-9]*\).*/\1/')
run "$RECCE" events --postmortem "$pid"
like "$(cat "$ERR")" "exited cleanly" "RECCE_KEEP=1 keeps it, and it says the exit was clean"

# --- fork: the child writes to a file of its own ------------------------------
spawn "$T/fork.out" "$TARGETS/ev-burst" 1 10 fork
wait_for 10 grep -q '^child' "$T/fork.out" || fail "no child" "$(cat "$T/fork.out")"
parent=$PID
child=$(awk '/^child/ { print $2 }' "$T/fork.out")
is "$(awk '/^child/ { print $3 }' "$T/fork.out")" "$RECCE_EVENTS_DIR/recce-$child.events" \
	"the child's file has the child's pid"
run "$RECCE" events -p "$child" --format json
is "$(grep -c '"name":"in_child"' "$OUT")" 5 "the child's file: its 5 events"
is "$(grep -c -e tick -e all_done "$OUT")" 0 "none of the parent's"
run "$RECCE" events -p "$parent" --format json
is "$(grep -c in_child "$OUT")" 0 "the parent's file: none of the child's"
is "$(grep -c '"name":"forked"' "$OUT")" 1 "but its own after the fork"
kill_quietly "$child" "$parent"

# --- exec: the new program starts a new file, the old one's is kept ---------
spawn "$T/exec.out" "$TARGETS/ev-burst" 2 50 exec
wait_for 10 sh -c "[ \$(grep -c ^ready '$T/exec.out') -ge 2 ]" || fail "no exec" "$(cat "$T/exec.out")"
run "$RECCE" events -p "$PID" --format json
is "$RC" 0 "events of the exec'd program exits 0"
is "$(count event tick worker-)" 3 "after exec: the new program's 3 ticks, not the old 100"
like "$(cat "$ERR")" "pid $PID ran another program before this one \\(exec\\): its events are in [^ ]*/recce-$PID\\.events\\.[A-Za-z0-9]{6} " \
	"and recce says where the old program's events are"
OLD=$(sed -n "s|.*its events are in \([^ ]*/recce-$PID\.events\.[A-Za-z0-9]*\) .*|\1|p" "$ERR")
remove_at_exit "$OLD"
run "$RECCE" events --postmortem "$OLD" --last 0 --format json
is "$(count event tick worker-)" 100 "the old program's 100 ticks are kept, in that file"
like "$(cat "$ERR")" "ran another program \\(exec\\) after these events: that program's are in [^ ]*/recce-$PID\\.events " \
	"which says where the new program's are"
kill_quietly "$PID"

# --- --follow goes on into the program an exec runs ------------------------
spawn "$T/execgo.out" "$TARGETS/ev-burst" 2 50 execgo
TGT=$PID
wait_for 10 grep -q '^waiting for SIGUSR1' "$T/execgo.out" || fail "ev-burst execgo did not start"
spawn_recce "$T/follow.json" "$T/follow.err" events -p "$TGT" --follow --format json
FOLLOWER=$PID
OUT=$T/follow.json
wait_for 30 eval '[ "$(count event tick worker-)" -ge 100 ]' || diag "the old program's ticks never came"
kill -USR1 "$TGT"
ok "--follow reads the new program's events after its exec" \
	wait_for 30 eval '[ "$(count event tick worker-)" -ge 103 ]'
ok "and goes on reading" kill -0 "$FOLLOWER"
kill_quietly "$TGT"
if wait_exit 30 "$FOLLOWER"; then
	is "$WAIT_RC" 0 "it ends with status 0 when the process does"
else
	fail "it ends with status 0 when the process does" "still running 30 s after"
fi
is "$(count event tick worker-)" 103 "each event once: the old program's 100 ticks, the new one's 3"
# Old: 2 workers' span, 50 ticks and counter, and all_done; new: 1
# worker's, with 3 ticks.
is "$(cat "$T/follow.err")" "recce: 107 events from 3 threads of pid $TGT (ev-burst)
recce: pid $TGT (ev-burst) ran another program (exec): following it
recce: 7 events from 2 threads of pid $TGT (ev-burst)" \
	"it sums up the old program, says it follows the new one, and sums that up at the end"

# --- Saved files, formats ----------------------------------------------------
spawn "$T/save.out" "$TARGETS/ev-burst" 2 100
wait_for 10 ready "$T/save.out" || fail "ev-burst did not start"
run "$RECCE" events -p "$PID" -o "$T/run.events"
is "$RC" 0 "-o run.events exits 0"
run "$RECCE" events -p "$PID" --format json
cp "$OUT" "$T/live.json"
kill_quietly "$PID"
run "$RECCE" events "$T/run.events" --format json
is "$RC" 0 "a saved file is read back"
untimed()
{
	sed 's/"time_ns":[0-9]*,"realtime_ns":[0-9]*//; s/,"duration_ns":[0-9]*//' "$1" | sort
}
ok "with the same events and threads as read live" \
	cmp <(untimed "$T/live.json") <(untimed "$OUT")
run "$RECCE" events "$T/run.events" -o "$T/run.trace.json" --format chrome
ok "--format chrome is JSON a trace viewer reads" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['traceEvents']
b = sum(1 for e in t if e['ph'] == 'B'); e = sum(1 for e in t if e['ph'] == 'E')
names = {x['args']['name'] for x in t if x['ph'] == 'M'}
sys.exit(not (b == 2 and e == 2 and {'worker-1', 'worker-2'} <= names))" "$T/run.trace.json"

# --- Damaged files, wrong input ------------------------------------------------
cp "$T/run.events" "$T/bad.events"
printf 'XXXX' | dd of="$T/bad.events" conv=notrunc 2>/dev/null
run "$RECCE" events "$T/bad.events"
is "$RC" 1 "a file with a wrong magic exits 1"
like "$(cat "$ERR")" "is not a librecce event file, or it is damaged" "and says so"
head -c 5000 "$T/run.events" >"$T/short.events"
run "$RECCE" events "$T/short.events"
is "$RC" 1 "a file cut short exits 1"
cp "$T/run.events" "$T/slots.events"
printf '\377\377\377\377' | dd of="$T/slots.events" bs=1 seek=96 conv=notrunc 2>/dev/null
run "$RECCE" events "$T/slots.events"
is "$RC" 1 "a file claiming 4 billion slots exits 1"
run "$RECCE" events -p "$(unused_pid)"
is "$RC" 1 "a pid that does not exist exits 1"
like "$(cat "$ERR")" "no process with pid" "and says so"
spawn "$T/sleep.out" sleep 30
run "$RECCE" events -p "$PID"
is "$RC" 1 "a process without librecce exits 1"
like "$(cat "$ERR")" "has no librecce event file: it does not use librecce" "and says why"
run "$RECCE" events
is "$RC" 2 "no source is a usage error"
run "$RECCE" events -p 1 --format xml
is "$RC" 2 "an unknown format is a usage error"

# --- RECCE_EVENTS=off: events cost nothing, no file ---------------------------
RECCE_EVENTS=off spawn "$T/off.out" "$TARGETS/ev-burst" 2 100
wait_for 10 ready "$T/off.out" || fail "ev-burst did not start"
like "$(cat "$T/off.out")" "ready \\(none\\)" "RECCE_EVENTS=off: no file is made"
kill_quietly "$PID"
# Threads whose first events meet as the library starts: one that saw
# events on just before another switched them off made the file (1 run
# in 300 here, under load).
made=0
for _ in $(seq 100); do
	RECCE_EVENTS=off "$TARGETS/ev-burst" 16 10 exit | grep -q 'ready (none)' || made=$((made + 1))
done
is "$made" 0 "RECCE_EVENTS=off: of 100 runs whose 16 threads start at once, none makes a file"

# --- C++: spans ended by destructors while an exception unwinds ---------------
spawn "$T/cxx.out" "$TARGETS/ev-throws" 3 40
wait_for 10 ready "$T/cxx.out" || fail "ev-throws did not start"
run "$RECCE" events -p "$PID" --format json
is "$(grep -c '"name":"attempt"' "$OUT")" 120 "C++: 3 x 40 attempts"
is "$(grep -c '"kind":"span_end","name":"round"' "$OUT")" 120 \
	"every span ended, half of them by unwinding"
is "$(grep -c '"name":"caught"' "$OUT")" 60 "3 x 20 exceptions caught"
is "$(grep '"span_end"' "$OUT" | grep -c duration_ns)" 120 "each end paired with its begin"
ok "the program runs on" kill -0 "$PID"
kill_quietly "$PID"

# --- Rust-shaped: dlopen, dlsym, Rust paths as names ---------------------------
spawn "$T/dl.out" "$TARGETS/ev-dlopen" "$LIBDIR/librecce.so" 3 200
wait_for 10 ready "$T/dl.out" || fail "ev-dlopen did not start" "$(cat "$T/dl.out")"
run "$RECCE" events -p "$PID" --format json
is "$(grep -c '"name":"hot::engine::rank"' "$OUT")" 600 "dlopen'd: 3 x 200 hot::engine::rank"
is "$(grep -c '"kind":"span_end","name":"hot::engine::run"' "$OUT")" 3 "3 spans"
is "$(grep -c 'app::main::done' "$OUT")" 1 "and an event after dlclose"
kill_quietly "$PID"

# --- Go through cgo ------------------------------------------------------------
if command -v go >/dev/null; then
	if CGO_CFLAGS="-I$ROOT/include" CGO_LDFLAGS="$LIBDIR/librecce.a -lpthread" \
		go build -o "$T/goev" tests/go/events/main.go 2>"$T/go.err"; then
		spawn "$T/go.out" "$T/goev" 8 500
		wait_for 20 ready "$T/go.out" || fail "goev did not start" "$(cat "$T/go.out")"
		run "$RECCE" events -p "$PID" --format json
		is "$(grep -c '"name":"tick"' "$OUT")" 4000 "Go: 8 goroutines x 500 ticks, on the scheduler's threads"
		is "$(grep -c '"kind":"span_end","name":"batch".*duration_ns' "$OUT")" 8 \
			"8 spans, each paired on its locked thread"
		is "$(grep -c '"name":"done"' "$OUT")" 1 "and done"
		unlike "$(cat "$ERR")" "lost|dropped" "nothing lost or dropped"
		kill_quietly "$PID"
	else
		fail "go build of tests/go/events" "$(cat "$T/go.err")"
	fi
else
	skip 4 "go is not installed"
fi

done_testing
