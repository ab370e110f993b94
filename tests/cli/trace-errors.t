#!/bin/bash
# `recce trace` and `recce replay` on what fails: a probe the kernel
# refuses, too many probes, a hostile --if, a wrong pid, an output that
# cannot be written. Each gets one message and its status (1, or 2 for
# usage), the target keeps running, and no half-written file is left.
# `make check` runs this file again under ASan (tests/cli/errors-asan.list),
# where an error path that touches freed memory fails.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/calls"

spawn_ready "$T/calls.out" "$TARGETS/calls" 100000 go 0
TARGET=$PID
kill -USR1 "$TARGET"

# pthread_spin_lock starts with "lock decl (%rdi)": no uprobe there.
run "$RECCE" trace -p "$TARGET" pthread_spin_lock --time 2 -o "$T/spin.trc"
is "$RC" 1 "a function the kernel cannot probe exits 1" || show_run
like "$(head -1 "$ERR")" \
	'cannot put a probe on the first instruction of libc.so.6:pthread_spin_lock \(a lock prefix\)' \
	"the message names it and says why"
like "$(tail -1 "$ERR")" 'trace its callers instead' "and what to do"
ok "and leaves no output file" test ! -e "$T/spin.trc"

# All of libc: the few functions the kernel refuses (a lock prefix, an
# AVX instruction whose opcode it does not run out of line) are left out
# with a warning, the others are traced.
run "$RECCE" trace -p "$TARGET" 'libc:*' --max-probes 100000 --count 1 --time 5
is "$RC" 0 "tracing all of libc exits 0" || show_run
like "$(cat "$ERR")" 'functions are not traced: the kernel cannot put a probe on their first instruction: .* and [0-9]+ more' \
	"naming a few of those left out"
like "$(cat "$ERR")" 'tracing [0-9]{4,} functions in process' "and tracing the thousands of others"
is "$(grep -c 'libc.so.6:' "$OUT")" 1 "the first call comes through"

# 100,000 '!' used to recurse once each and overflow the stack.
BANGS=$(printf '!%.0s' $(seq 100000))1
run "$RECCE" trace -p "$TARGET" add_pair --if "$BANGS" --time 2
is "$RC" 2 "an --if of 100,000 characters is a usage error" || show_run
like "$(head -1 "$ERR")" 'condition longer than 4096 characters' "saying what the limit is"
run "$RECCE" replay --if "${BANGS: -1001}" tests/fuzz/corpus/trace-file/calls.trc
is "$RC" 2 "replay --if with 1,000 '!' is a usage error" || show_run
like "$(head -1 "$ERR")" 'condition too long' "saying so"

# A zombie (a child its parent never reaps) has no mappings left. The
# child ends once its parent runs sleep, which never reaps it (had it
# ended before the exec, bash could have reaped it).
bash -c '{ while read -r c </proc/$$/comm && [ "$c" != sleep ]; do :; done; } &
	echo $! >"$0"; exec sleep 30' "$T/zombie.pid" &
_spawned+=("$!")
wait_for 2 test -s "$T/zombie.pid"
ZOMBIE=$(cat "$T/zombie.pid")
wait_for 2 grep -q '^State:.*Z' "/proc/$ZOMBIE/status"
run "$RECCE" trace -p "$ZOMBIE" malloc --time 1
is "$RC" 1 "tracing a zombie exits 1" || show_run
like "$(cat "$ERR")" "process $ZOMBIE has exited \(a zombie" "saying it has exited, not that malloc is missing"

run "$RECCE" trace -p 999999999 add_pair --time 1
is "$RC" 1 "a pid that does not exist exits 1" || show_run
run "$RECCE" trace -p "$TARGET" add_pair --time 1 -o /proc/recce.trc
is "$RC" 1 "an output that cannot be created exits 1" || show_run

# A full disk: a 64 KiB filesystem fills within milliseconds of a hot
# function's events; the trace stops at once and keeps what it wrote.
if [ "$(id -u)" = 0 ] && mkdir "$T/full" && mount -t tmpfs -o size=64k tmpfs "$T/full"; then
	unmount_at_exit "$T/full"
	run "$RECCE" trace -p "$TARGET" add_pair greet --count 0 --limit 0 --time 20 -o "$T/full/t.trc"
	is "$RC" 1 "a trace whose disk fills exits 1" || show_run
	like "$(cat "$ERR")" "stopped after [0-9]+ events: the trace file could not be written" \
		"and stops at once, not at --time"
	like "$(cat "$ERR")" "cannot write '.*t.trc': No space left on device; the events before it are kept" \
		"saying why, and that what was written is kept"
	run "$RECCE" replay "$T/full/t.trc"
	cmp_ok "$(grep -c 'add_pair(' "$OUT")" '>' 10 "the events written before the disk filled replay"
	umount "$T/full"
else
	skip 4 "needs root to mount a small tmpfs"
fi

ok "the target is still running after all of it" kill -0 "$TARGET"
state=$(awk '{print $3}' "/proc/$TARGET/stat")
isnt "$state" T "and is not stopped"

done_testing
