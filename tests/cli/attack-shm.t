#!/bin/bash
# Attacks through the files recce shares in /dev/shm. A second user the
# test makes plants recce-PID.events for another user's process before
# its first event: librecce must still write its events (under a name
# only it could make) and recce must still read them, through the
# process's maps, leaving her file alone. The process itself is hostile:
# its thread's name holds a newline and a forged recce line, which no
# output prints raw, and it keeps rewriting the header of recce's --fast
# file (slot size, slot count, claimed slots), which must not steer
# root's recce trace --fast outside the file, crash it or make it show
# calls it did not see; and it says its records and children are pid 1's,
# which must not make recce read or change init, nor pass unsaid.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/ev-hostile"
make_user
cp "$TARGETS/ev-hostile" "$T/bin/"
mkfifo -m 0666 "$T/go"

# The target, as nobody: it says its pid, then waits for a line.
spawn "$T/target.out" runuser -u nobody -- sh -c "exec '$T/bin/ev-hostile' < '$T/go'"
exec 7> "$T/go"
wait_for 10 grep -q '^pid ' "$T/target.out" || diag "the target did not start: $(cat "$T/target.out")"
TGT=$(sed -n 's/^pid //p' "$T/target.out")
remove_at_exit "/dev/shm/recce-$TGT.events"
runuser -u "$U" -- touch "/dev/shm/recce-$TGT.events"
echo go >&7
wait_for 10 bash -c "ls /dev/shm/recce-$TGT.events.* > /dev/null 2>&1" ||
	diag "no event file of the target under another name: $(ls /dev/shm | grep "recce-$TGT" | tr '\n' ' ')"

run "$RECCE" events -p "$TGT"
is "$RC" 0 "recce events -p reads the target's events though another user planted its file's name" || show_run
like "$(cat "$OUT")" 'hostile' "it shows the events the target wrote"
is "$(stat -c '%U %s' "/dev/shm/recce-$TGT.events")" "$U 0" "her planted file is left as it was, and holds nothing of the target's"
ok "the target's own file has a name only it could make" bash -c "ls /dev/shm/recce-$TGT.events.?????? > /dev/null"

# A thread name with a newline: no line of any output starts with the
# forged text.
is "$(grep -c '^recce: x' "$OUT" "$ERR" | awk -F: '{ s += $2 } END { print s }')" 0 \
	"the thread's name prints on one line, its newline escaped"
like "$(cat "$OUT")" 'evil\\x0arecce: x' "and shows as evil\\x0arecce: x"

# --fast while the target rewrites the header of recce's file.
run "$RECCE" trace -p "$TGT" hostile_work --fast --count 20 --format json
is "$RC" 0 "trace --fast survives a target that rewrites its file's geometry" || show_run
# The library in the target follows the header it wrecks, and may record
# nothing: every call is then counted as not recorded, never invented.
ok "every call is shown, or counted as not recorded" \
	bash -c "grep -q '\"function\":\"[^\"]*hostile_work\"' '$OUT' || grep -q 'calls or returns were not recorded' '$ERR'"
pids=$(grep -o '"pid":[0-9]*' "$OUT" | sort -u | tr '\n' ' ')
ok "calls are shown as the target's, or as the pid 1 it gave ($pids)" \
	bash -c "[ -z \"\$(grep -o '\"pid\":[0-9]*' '$OUT' | grep -v '\"pid\":\($TGT\|1\)\$')\" ]"
if grep -q '"pid":1[,}]' "$OUT"; then
	like "$(cat "$ERR")" 'calls? came from children of the target that recce could not confirm' \
		"and those of pid 1 are said not confirmed, their memory unread"
else
	pass "no call was read before the target changed its pid"
fi
unlike "$(cat "$ERR")" 'still hold' "recce changes no code of init, which does not map its file"
ok "the target still runs" kill -0 "$TGT"

done_testing
