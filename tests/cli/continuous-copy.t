#!/bin/bash
# The continuous agent's stack copy grows where the stacks it samples end
# at it, as record's does. deep, built without frame pointers, runs at the
# bottom of 41 KiB of stack: with the default 8 KiB copy every one of its
# stacks ends at [stack copy ended]. The agent grows the copy to 64 KiB
# (at once, or by way of a size another process's stacks asked for first:
# it samples the whole machine), says so once per size, and /metrics
# shows the copy and the stacks it cut; every
# stack of deep in the windows written after that is whole, main to
# bottom. --call-graph auto,8192 keeps its copy.
. "$(dirname "$0")/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$NOFP/deep" /usr/bin/curl

WHOLE="(^|;)main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)"
IN_BOTTOM='(^|;)bottom(;|$)'

STORE=$T/store
spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$STORE" --window 1s --rate 99 --http 127.0.0.1:0
AGENT=$PID
ok "the agent starts" wait_for 15 grep -q 'profiling every process' "$T/agent.err" ||
	diag "$(cat "$T/agent.err")"
HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent.err")

spawn "$T/deep.out" "$NOFP/deep" 600
DEEP=$PID
GREW='the stack copy grew from [0-9]+ to 65528 bytes: [0-9]+ of the [0-9]+ samples taken with smaller copies were cut where it ended \(--call-graph auto,65528 copies that much from the start\)'
ok "the agent grows its copy to 64 KiB, and says so" wait_for 60 grep -qE "$GREW" "$T/agent.err" ||
	diag "$(cat "$T/agent.err")"
like "$(grep -m 1 'stack copy grew' "$T/agent.err")" 'grew from 8192 to ' "from 8 KiB"
is "$(grep -o 'grew from [0-9]* to [0-9]*' "$T/agent.err" | sort | uniq -d)" "" "each growth said once"
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 65528 "/metrics: the copy is 64 KiB"
cmp_ok "$(agent_metric "http://$HTTP" stacks_copy_ended_total)" '>=' 4 \
	"/metrics: the stacks cut where the smaller copy ended are counted"
# A window after the one it grew in, then two more.
next_window "http://$HTTP" || diag "the agent wrote no window"
FROM=$(date +%s.%N)
next_window "http://$HTTP" || diag "the agent wrote no window"
next_window "http://$HTTP" || diag "the agent wrote no window"
run "$RECCE" query --store "$STORE" --from "@$FROM" --pid "$DEEP" -o "$T/deep.pb.gz"
is "$RC" 0 "query --pid deep exits 0" || show_run
F=$(folded "$T/deep.pb.gz")
BOTTOM=$(folded_count "$F" "$IN_BOTTOM")
cmp_ok "$BOTTOM" '>' 0 "deep has samples in bottom since ($BOTTOM)"
is "$(folded_count "$F" "$WHOLE")" "$BOTTOM" "every one is whole, main to bottom" ||
	diag "$(folded_top "$F" 3)"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
is "$WAIT_RC" 0 "the agent stops on Ctrl-C with status 0"

# A copy asked for is kept.
spawn_recce "$T/agent2.out" "$T/agent2.err" agent --continuous --socket "$T/a2/a.sock" \
	--store "$T/store2" --window 1s --rate 99 --http 127.0.0.1:0 --call-graph auto,8192
AGENT=$PID
ok "an agent with --call-graph auto,8192 starts" wait_for 15 grep -q 'profiling every process' "$T/agent2.err"
HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent2.err")
cut() { [ "$(agent_metric "http://$HTTP" stacks_copy_ended_total)" -ge 100 ]; }
ok "its stacks of deep end at the copy" wait_for 60 cut
next_window "http://$HTTP" || diag "the agent wrote no window"
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 8192 "and it keeps its copy"
unlike "$(cat "$T/agent2.err")" 'stack copy grew' "and says nothing of growing"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
kill_quietly "$DEEP"
done_testing
