#!/bin/bash
# librecce from a language that builds names at run time (Python through
# ctypes, whose bytes objects reuse one buffer): every event keeps its own
# name. A reader started before the program's first event waits for it,
# saying so once; one started on a process without librecce fails at
# once. --postmortem says how many events it did not show, and --last 0
# shows every one.
. "$(dirname "$0")/lib.sh"
LIBDIR=$(cd "$TARGETS/../lib" && pwd)
need_file "$RECCE" "$LIBDIR/librecce.so"

ready()
{
	grep -q '^ready' "$1"
}

# The reader first, the events second.
spawn "$T/py.out" env RECCE_KEEP=1 python3 tests/py/ctypes-events.py "$LIBDIR/librecce.so" 99 \
	"$T/go" "$T/end"
PY=$PID
remove_at_exit "/dev/shm/recce-$PY.events"
wait_for 20 ready "$T/py.out" || fail "the Python program starts" "$(cat "$T/py.out")"
spawn_recce "$T/f.out" "$T/f.err" events -p "$PY" -f --format json
R=$PID
ok "a reader of a process that has written no event yet waits, and says so" \
	wait_for 20 grep -q 'uses librecce but has written no event yet: waiting for its first' "$T/f.err"
ok "and keeps waiting" kill -0 "$R"
: >"$T/go"
ok "it reads the events once they come" wait_for 20 grep -q '"name":"done"' "$T/f.out"
: >"$T/end"
wait_exit 20 "$PY"
wait_exit 20 "$R" || fail "the reader ends with the process" "still running"
is "$WAIT_RC" 0 "and exits 0" || cat "$T/f.err"
is "$(grep -c 'waiting for its first' "$T/f.err")" 1 "it said so once"
for k in 0 1 2; do
	is "$(grep -c "\"name\":\"kind-$k\"" "$T/f.out")" 33 \
		"kind-$k: 33 of the 99 names built at run time in a reused buffer"
done

# After the exit: the default shows 20, and says what more there is.
run "$RECCE" events --postmortem "$PY"
is "$RC" 0 "--postmortem exits 0" || show_run
is "$(grep -c 'kind-' "$OUT")" 19 "it shows the last 20 events of the thread (19 kind-, 1 done)"
like "$(cat "$ERR")" '80 more events are in the file: --last N shows each thread.s last N, --last 0 all of them' \
	"and says how many more the file holds, and how to see them"
run "$RECCE" events --postmortem "$PY" --last 0
is "$(grep -c 'kind-\|done' "$OUT")" 100 "--last 0 shows all 100"
unlike "$(cat "$ERR")" 'more event' "and hides none"

# A process without librecce: the error at once, no waiting.
spawn "$T/sleep.out" sleep 60
run "$RECCE" events -p "$PID" -d 30
is "$RC" 1 "events -p on a process without librecce exits 1 at once"
like "$(cat "$ERR")" "process $PID has no librecce event file" "with the message that says why"
kill_quietly "$PID"

done_testing
