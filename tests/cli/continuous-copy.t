#!/bin/bash
# The continuous agent's stack copy: deep, built without frame pointers,
# runs at the bottom of 41 KiB of stack. With the default 8 KiB copy its
# stacks end at [stack copy ended], and /metrics counts them beside the
# copy, which does not grow (each CPU's ring holds 2 MiB: a busy agent
# with 64 KiB copies lost records); with --call-graph auto,65528 every
# stack of deep in the agent's windows is whole, main to bottom.
. "$(dirname "$0")/lib.sh"
NOFP=$(dirname "$TARGETS")/targets-nofp
need_file "$RECCE" "$NOFP/deep" /usr/bin/curl

WHOLE="(^|;)main;$(printf 'descend;%.0s' $(seq 40))bottom(;|\$)"
IN_BOTTOM='(^|;)bottom(;|$)'

spawn "$T/deep.out" "$NOFP/deep" 600
DEEP=$PID

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

start_agent 1
cut() { [ "$(agent_metric "http://$HTTP" stacks_copy_ended_total)" -ge 20 ]; }
ok "/metrics counts the stacks cut where the copy ended" wait_for 60 cut
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 8192 "/metrics: the copy, 8 KiB, as it began"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
is "$WAIT_RC" 0 "the agent stops on Ctrl-C with status 0"

start_agent 2 --call-graph auto,65528
is "$(agent_metric "http://$HTTP" stack_copy_bytes)" 65528 "/metrics: the copy asked for"
FROM=$(date +%s.%N)
next_window "http://$HTTP" || diag "the agent wrote no window"
next_window "http://$HTTP" || diag "the agent wrote no window"
run "$RECCE" query --store "$T/store2" --from "@$FROM" --pid "$DEEP" -o "$T/deep.pb.gz"
is "$RC" 0 "query --pid deep exits 0" || show_run
F=$(folded "$T/deep.pb.gz")
BOTTOM=$(folded_count "$F" "$IN_BOTTOM")
cmp_ok "$BOTTOM" '>' 0 "deep has samples in bottom ($BOTTOM)"
is "$(folded_count "$F" "$WHOLE")" "$BOTTOM" "every one is whole, main to bottom" ||
	diag "$(folded_top "$F" 3)"
kill -INT "$AGENT"
wait_exit 20 "$AGENT"
kill_quietly "$DEEP"
done_testing
