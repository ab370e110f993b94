#!/bin/bash
# recce agent --config FILE: every option from a file (NAME VALUE a
# line), the command line winning; a file another user could change is
# refused when the agent runs as root (attacked by a second user); a bad
# line is named by its number.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
make_user

cat >"$T/agent.conf" <<CONF
# the continuous agent of this host
continuous
store $T/store
window = 2s
rate 49

http 127.0.0.1:0
CONF
chmod 0644 "$T/agent.conf"

# start NAME ARGS...: an agent; waits for its first word ($PID, $T/NAME.err).
start()
{
	local name=$1
	shift
	spawn_recce "$T/$name.out" "$T/$name.err" agent --socket "$T/$name/a.sock" "$@"
	wait_for 30 grep -q 'profiling every process\|error' "$T/$name.err"
}

start plain --config "$T/agent.conf"
like "$(cat "$T/plain.err")" \
	"profiling every process at 49 Hz per CPU in windows of 2s into $T/store; metrics at http://127\\.0\\.0\\.1:[0-9]+" \
	"the agent takes every option of the file"
kill -INT "$PID"
wait_exit 10 "$PID"
is "$WAIT_RC" 0 "and stops with status 0"

start over --rate 29 --config="$T/agent.conf" --window 3s
like "$(cat "$T/over.err")" "profiling every process at 29 Hz per CPU in windows of 3s into $T/store" \
	"an option on the command line wins over the file's"
kill -INT "$PID"
wait_exit 10 "$PID"

# A second user who owns the file, or may write it, would choose what the
# agent runs as root with: refused, and nothing starts.
cp "$T/agent.conf" "$T/theirs.conf"
chown "$U" "$T/theirs.conf"
run "$RECCE" agent --socket "$T/u/a.sock" --config "$T/theirs.conf"
is "$RC" 1 "a file of another user: exit 1"
like "$(cat "$ERR")" "the options file $T/theirs.conf could be changed by another user than root \\(owner [0-9]+, mode 0644\\)" \
	"it says why" || show_run
ok "and serves nothing" test ! -e "$T/u/a.sock"
chown root "$T/theirs.conf"
chmod 0666 "$T/theirs.conf"
run "$RECCE" agent --socket "$T/u/a.sock" --config "$T/theirs.conf"
is "$RC" 1 "a file anyone may write: exit 1"
like "$(cat "$ERR")" "mode 0666" "it says so"
ln -s "$T/agent.conf" "$T/link.conf"
run "$RECCE" agent --socket "$T/u/a.sock" --config "$T/link.conf"
is "$RC" 1 "a symbolic link, which another user might turn: exit 1"

printf 'rate 49\n--window 2s\n' >"$T/bad.conf"
run "$RECCE" agent --config "$T/bad.conf"
is "$RC" 1 "a line with dashes: exit 1"
like "$(cat "$ERR")" "$T/bad.conf line 2: a line is NAME \\[VALUE\\]" "the line is named"
printf 'no-such-option 1\n' >"$T/unknown.conf"
run "$RECCE" agent --config "$T/unknown.conf"
is "$RC" 2 "an option the agent does not have: usage error"
like "$(cat "$ERR")" "unknown option '--no-such-option=1'" "named"
run "$RECCE" agent --config "$T/nowhere.conf"
is "$RC" 1 "a file that is not there: exit 1"
like "$(cat "$ERR")" "cannot read the options file $T/nowhere.conf: No such file or directory" "said"

done_testing
