#!/bin/bash
# The continuous agent's stack copy: deep, built without frame pointers,
# runs at the bottom of 41 KiB of stack, and a second deep at the bottom
# of 11 KiB. With the default 8 KiB copy their stacks end at [stack copy
# ended]; the copy grows, as record's does, but to 16 KiB at most (each
# CPU's ring holds 2 MiB: a busy agent with 64 KiB copies lost records).
# /metrics counts the stacks cut beside the copy. After it grew, the
# 11 KiB stacks are whole and the 41 KiB ones still cut; with
# --call-graph auto,65528 every stack of deep is whole, main to bottom.
. "$(dirname "$0")/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$NOFP/deep" /usr/bin/curl

WHOLE="(^|;)main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)"
IN_BOTTOM='(^|;)bottom(;|$)'

spawn "$T/deep.out" "$NOFP/deep" 600
DEEP=$PID
spawn "$T/mid.out" "$NOFP/deep" 600 10
MID=$PID

# start_agent N ARGS...: an agent of its own store and socket; sets
# AGENT and HTTP.
start_agent()
{
	local n=$1
	shift
	spawn_recce "$T/agent$n.out" "$T/agent$n.err" agent --continuous --socket "$T/a$n/a.sock" \
		--store "$T/store$n" --window 1s --rate 99 --http 127.0.0.1:0 "$@"
	AGENT=$PID
	ok "agent $n starts" wait_for 15 grep -q 'profiling every process' "$T/agent$n.err" ||
		diag "$(cat "$T/agent$n.err")"
	HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent$n.err")
}

# two_windows: waits for two windows of the agent from now on (FROM).
two_windows()
{
	FROM=$(date +%s.%N)
	next_window "http://$HTTP" || diag "the agent wrote no window"
	next_window "http://$HTTP" || diag "the agent wrote no window"
}

# stacks_of N PID NAME: PID's stacks in agent N's windows since FROM, in
# F, and how many are in bottom, in BOTTOM.
stacks_of()
{
	run "$RECCE" query --store "$T/store$1" --from "@$FROM" --pid "$2" -o "$T/$3.pb.gz"
	is "$RC" 0 "query --pid $3 exits 0" || show_run
	F=$(folded "$T/$3.pb.gz")
	BOTTOM=$(folded_count "$F" "$IN_BOTTOM")
}

start_agent 1
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 8192 "/metrics: the copy, 8 KiB, as it begins"
grew() { [ "$(agent_metric "http://$HTTP" stack_copy_bytes)" = 16384 ]; }
ok "/metrics: the copy grew to 16 KiB" wait_for 60 grew
like "$(cat "$T/agent1.err")" 'stacks ended where the stack copy did, 1 in 100 or more: it grew to 16384 bytes \(at most 16384: --call-graph auto,BYTES copies more from the start\)' \
	"the agent says so, and what copies more"
two_windows
stacks_of 1 "$MID" mid
cmp_ok "$BOTTOM" '>' 0 "the 11 KiB deep has samples in bottom ($BOTTOM)"
is "$(folded_count "$F" "(^|;)main;$(printf 'descend;%.0s' $(seq 10))bottom(;|\$)")" "$BOTTOM" \
	"every one is whole, main to bottom, in the 16 KiB copy" || diag "$(folded_top "$F" 3)"
stacks_of 1 "$DEEP" deep1
is "$(folded_count "$F" '(^|;)\[stack copy ended\];(.*;)?bottom(;|$)')" "$BOTTOM" \
	"the 41 KiB deep's $BOTTOM stacks in bottom end where the copy did, marked" ||
	diag "$(folded_top "$F" 3)"
cmp_ok "$(agent_metric "http://$HTTP" stacks_copy_ended_total)" '>=' "$BOTTOM" \
	"/metrics counts the stacks cut where the copy ended"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
is "$WAIT_RC" 0 "the agent stops on Ctrl-C with status 0"

start_agent 2 --call-graph auto,65528
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 65528 "/metrics: the copy asked for"
two_windows
stacks_of 2 "$DEEP" deep
cmp_ok "$BOTTOM" '>' 0 "deep has samples in bottom ($BOTTOM)"
is "$(folded_count "$F" "$WHOLE")" "$BOTTOM" "every one is whole, main to bottom" ||
	diag "$(folded_top "$F" 3)"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
kill_quietly "$DEEP"
kill_quietly "$MID"
done_testing
