#!/bin/bash
# A process with a thread that cannot stop (waiting in the kernel for a
# vfork child that never execs): `recce trace --fast`, which must stop
# every thread to load its library, gives up after 2 s, says why in one
# line, exits 1 and leaves the process running, untraced and unchanged;
# once the thread is free, the same trace works.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/vforker"

spawn_ready "$T/vforker.out" "$TARGETS/vforker"
P=$PID
ok "the vfork child is there" wait_for 60 pgrep -P "$P"
CHILD=$(pgrep -P "$P")
STUCK=$(ps -L -o tid=,stat= -p "$P" | awk '$2 ~ /^D/ { print $1 }')
cmp_ok "${STUCK:-0}" '>' 0 "a thread of the target waits in the kernel"

run "$RECCE" trace --fast -p "$P" work --count 2
is "$RC" 1 "trace --fast exits 1" || show_run
is "$(cat "$ERR")" "recce: error: a thread of process $P did not stop for recce within 2 s (stuck in the kernel, or the machine very busy): it runs on unchanged; try again" \
	"and says why in one line"
is "$(awk '/^TracerPid:/ { print $2 }' "/proc/$P/status")" 0 "the process is traced by no one after"
is "$(awk '/^TracerPid:/ { print $2 }' "/proc/$STUCK/status")" 0 "nor is its stuck thread"
run "$RECCE" trace -p "$P" work --count 3
is "$RC" 0 "its main thread runs on: traced through the kernel" || show_run
is "$(grep -c 'vforker:work(' "$OUT")" 3 "3 calls of work()"

kill -KILL "$CHILD"
ok "the thread is free once the child is gone" wait_for 60 sh -c "! ps -L -o stat= -p $P | grep -q '^D'"
run "$RECCE" trace --fast -p "$P" work --count 3
is "$RC" 0 "then trace --fast works" || show_run
is "$(grep -c 'vforker:work(' "$OUT")" 3 "with its 3 calls"

done_testing
