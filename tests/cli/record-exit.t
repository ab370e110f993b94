#!/bin/bash
# A target that exits during the recording: recce stops soon after it, writes
# the profile, and the samples still have names (symbolized before the
# process and its mappings were gone).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/exits"

# record -d 5 -- CMD where CMD lives 1 s.
P="$T/cmd.pb.gz"
run "$RECCE" record -d 5 -o "$P" -- "$TARGETS/exits" 1
is "$RC" 0 "record -d 5 -- exits 1: status 0" || show_run
like "$(cat "$OUT")" '^exits: done$' "the command ran to its end"
# exits says how much CPU it had: at 99 Hz of CPU time, the samples.
CPU=$(sed -n 's/^exits: cpu \([0-9.]*\) s$/\1/p' "$ERR")
WANT=$(awk -v c="$CPU" 'BEGIN { printf "%d", c * 99 }')
like "$(zcat "$P" | tr -c '[:print:]' '\n')" 'stopped-by: targets exited' \
	"recce ended with the command, not after -d (${ELAPSED}s), and the profile says so"
ok "the profile is written" gzip -t "$P"
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_until_exit$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "its hot function is named in most samples ($BURN of $TOTAL)"
ok "the samples match its CPU time x 99 Hz ($TOTAL for ${CPU}s, ~$WANT)" near "$TOTAL" "$WANT" 0.2
cmp_ok "$TOTAL" '>' 0 "samples were taken ($TOTAL)"

# record -p PID -d 5 where PID exits after 1.5 s.
spawn "$T/exits.out" "$TARGETS/exits" 1.5
TGT=$PID
P="$T/pid.pb.gz"
run "$RECCE" record -p "$TGT" -d 5 -o "$P"
is "$RC" 0 "record -p PID -d 5 on a process that exits: status 0" || show_run
like "$(zcat "$P" | tr -c '[:print:]' '\n')" 'stopped-by: targets exited' \
	"recce ends with the process, not after -d (${ELAPSED}s), and the profile says so"
like "$(cat "$ERR")" "recce: [0-9]+ samples" "the summary is printed"
FOLDED=$(folded "$P")
TOTAL=$(folded_total "$FOLDED")
BURN=$(folded_count "$(folded_user "$FOLDED")" '(^|;)burn_until_exit$')
cmp_ok "$BURN" '>' "$TOTAL * 0.8" "its hot function is named in most samples ($BURN of $TOTAL)"
# As many as the CPU a loaded machine gave it while attached: some.
cmp_ok "$TOTAL" '>' 0 "samples were taken ($TOTAL)"

# A process that exits around the moment recce attaches: whatever the race
# gives, recce ends by itself with 0 (profile written) or 1 (one message
# naming the process), never a crash or a hang.
for life in 0.01 0.03 0.06 0.1 0.2; do
	spawn "$T/race.out" "$TARGETS/exits" "$life"
	TGT=$PID
	RUN_TIMEOUT=10 run "$RECCE" record -p "$TGT" -d 2 -o "$T/race.pb.gz"
	case "$RC" in
	0) ok "attach racing an exit after ${life}s: status 0 and a profile" gzip -t "$T/race.pb.gz" ;;
	1) like "$(cat "$ERR")" "$TGT" "attach racing an exit after ${life}s: status 1 naming PID $TGT" ;;
	*) fail "attach racing an exit after ${life}s: status 0 or 1" "status $RC" "$(cat "$ERR")" ;;
	esac
	rm -f "$T/race.pb.gz"
	wait "$TGT" 2>/dev/null
done

# Of two PIDs, one already exited (a zombie nobody reaped): status 1 naming
# it, and the other one's samples are still written.
spawn "$T/zombie.out" sh -c '"$0" 0.01 & echo $!; exec sleep 30' "$TARGETS/exits"
wait_for 5 grep -q '^[0-9]' "$T/zombie.out"
Z=$(grep -m1 '^[0-9]' "$T/zombie.out")
is_zombie()
{
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]
}
wait_for 5 is_zombie "$Z" || diag "PID $Z did not become a zombie"
spawn "$T/live.out" "$TARGETS/hot" 1
LIVE=$PID
run "$RECCE" record -p "$LIVE,$Z" -d 3 -o "$T/half.pb.gz"
is "$RC" 1 "record -p LIVE,EXITED: status 1" || show_run
like "$(cat "$ERR")" "$Z" "the message names the exited PID $Z"
unlike "$(cat "$ERR")" "process $LIVE " "and not the live one"
ok "the live process's profile is still written" gzip -t "$T/half.pb.gz"
like "$(folded "$T/half.pb.gz")" '(^|;)burn_cpu [0-9]+$' "with its burn_cpu"

done_testing
