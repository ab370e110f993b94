#!/bin/bash
# recce agent --continuous names a process by its command, program and
# build-id even when its samples are read only after it ended, and so
# after it could be looked at: one that was running when the agent
# started, first ran while the profiler was held up, and was gone when
# the profiler read its samples.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
command -v curl >/dev/null || skip_all "needs curl for the agent's /metrics"

# state PID: the process's state letter (T when stopped).
state() { awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null; }
stopped() { [ "$(state "$1")" = T ]; }

# A perl that stops itself at once, then burns CPU for a fixed amount of
# work when it is let go.
spawn "$T/perl.out" perl -e 'kill STOP => $$; $x++ for 1 .. 1e7'
QUIET=$PID
wait_for 20 stopped "$QUIET" || diag "perl never stopped: $(state "$QUIET")"

spawn_recce "$T/agent.out" "$T/agent.err" agent --continuous --socket "$T/a/a.sock" \
	--store "$T/store" --window 2s --rate 99 --http 127.0.0.1:0
AGENT=$PID
wait_for 15 grep -q 'profiling every process' "$T/agent.err" ||
	diag "the agent did not start: $(cat "$T/agent.err")"
HTTP=$(sed -n 's/.*metrics at http:\/\/\([0-9.:]*\).*/\1/p' "$T/agent.err")

# The profiler (the agent's one child) is held while perl runs to its
# end: perl's samples wait in the rings until perl is gone.
PROFILER=$(pgrep -P "$AGENT")
kill -STOP $PROFILER
kill -CONT "$QUIET"
wait_exit 60 "$QUIET"
is "$WAIT_RC" 0 "perl ran to its end while the profiler was held"
kill -CONT $PROFILER
next_window "http://$HTTP" || diag "the agent wrote no window after perl ended"
kill -INT "$AGENT"
wait_exit 10 "$AGENT"
is "$WAIT_RC" 0 "Ctrl-C stops the agent with status 0"

run "$RECCE" query --store "$T/store" --pid "$QUIET" -o "$T/perl.pb.gz"
is "$RC" 0 "the ended process's samples are stored" || show_run
perl "$(dirname "$0")/pprof-labels.pl" "$T/perl.pb.gz" >"$T/labels"
cmp_ok "$(wc -l <"$T/labels")" '>' 0 "its samples are there"
EXE=$(readlink -f /usr/bin/perl)
ID=$(readelf -n "$EXE" | awk '/Build ID/ { print $3 }')
like "$ID" '^[0-9a-f]{40}$' "Debian's perl has a build-id"
is "$(grep -vc "pid=$QUIET .*comm=perl exe=/usr/bin/perl[0-9.]* build_id=$ID" "$T/labels")" 0 \
	"every sample has its command, program and build-id" || diag "$(cat "$T/labels")"

done_testing
