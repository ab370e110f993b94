#!/bin/bash
# A server whose master sleeps while its workers burn CPU (nginx, a
# pre-forking shell): recording the master alone says which descendants
# were busy and how to include them; --tree records them.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot"

# The master: a shell that starts two busy workers and waits.
spawn "$T/master.out" sh -c "'$TARGETS/hot' 8 & '$TARGETS/hot' 8 & wait"
M=$PID
# Both children are hot (exec'd, not the shell's forks still) before
# recce looks, so that each is there from the recording's start.
wait_for 5 eval '[ "$(pgrep -x -P '"$M"' hot | wc -l)" -ge 2 ]' || diag "the workers did not start"

run "$RECCE" record -p "$M" -d 1 -o "$T/master.pb.gz"
is "$RC" 0 "recording the idle master exits 0" || show_run
like "$(cat "$ERR")" 'recce: 0 samples' "and takes no sample"
like "$(cat "$ERR")" 'used no CPU, but 2 of its descendants did: [0-9]+ \(hot\), [0-9]+ \(hot\); record them with -p, or add --tree' \
	"it names the two busy workers and says how to record them" || show_run

run "$RECCE" record -p "$M" --tree -d 1 -o "$T/tree.pb.gz"
is "$RC" 0 "record --tree exits 0" || show_run
like "$(cat "$ERR")" '--tree: 2 descendant processes too' "--tree adds the two workers"
unlike "$(cat "$ERR")" 'used no CPU' "and has nothing to warn about"
like "$(folded "$T/tree.pb.gz")" '(^|;)burn_cpu [0-9]+$' "their hot function is in the profile"

run "$RECCE" record --tree -d 1 -- true
is "$RC" 2 "--tree without -p is a usage error"

done_testing
