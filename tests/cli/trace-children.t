#!/bin/bash
# `recce trace -p PID` on a process that creates processes: every call of
# every child and grandchild is traced from its first instruction (the
# children call from their first moments), none is made up as unwound;
# no breakpoint is left in the family, and none is ever put in a process
# outside it; when one outside maps a traced file, recce says that the new
# processes were traced late, and why. With --fast too.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/forker"

# traced OUT: "calls returns unwound processes" in a trace's text output.
traced()
{
	echo "$(grep -c 'forker:step(' "$1")" "$(grep -c 'forker:step.* --> [0-9]' "$1")" \
		"$(grep -c 'unwound' "$1")" "$(awk '{ print $2 }' "$1" | sort -u | wc -l)"
}

# trace_forker NAME CHILDREN CALLS: starts forker, and trace on it (not
# yet forking); sets $P and $R, output in $T/NAME.out, .t.out, .t.err.
trace_forker()
{
	spawn "$T/$1.out" "$TARGETS/forker" "$2" "$3"
	P=$PID
	wait_for 20 grep -q 'forker: ready' "$T/$1.out"
	spawn_recce "$T/$1.t.out" "$T/$1.t.err" trace -p "$P" forker:step --return \
		--count 0 --time 600 --limit 100000/1000
	R=$PID
	ok "$1: trace attaches" wait_for 60 grep -q '^recce: tracing' "$T/$1.t.err"
}

# 20 children, each with a grandchild, 100 calls each from their first
# moments: 4,000 calls in 40 processes, all forked while traced. (Traced
# from when recce reads of each, about 1,100 of 8,000 were seen.)
trace_forker f 20 100
kill -USR1 "$P"
ok "the target forks its 40 processes" wait_for 120 grep -q 'forker: done' "$T/f.out"
kill -INT "$R"
wait "$R"
is "$?" 0 "trace exits 0"
is "$(traced "$T/f.t.out")" "4000 4000 0 40" \
	"every call of every child and grandchild, each with its return, none unwound, in 40 processes"
is "$(grep -c "<$P>" "$T/f.t.out")" 0 "the parent, which never calls, shows nothing"
is "$(grep -c 'traced only from when\|could not be opened' "$T/f.t.err")" 0 \
	"and recce says nothing of a process traced late" || diag "$(cat "$T/f.t.err")"
run python3 tests/cli/code-bytes.py "$P"
is "$RC" 0 "the target's code equals its files after the trace" || show_run

# fast_forker NAME ARGS...: forker ARGS, and trace --fast on it (not yet
# forking); sets $FP and $R, output in $T/NAME.out, .t.out, .t.err.
fast_forker()
{
	local name=$1
	shift
	spawn "$T/$name.out" "$TARGETS/forker" "$@"
	FP=$PID
	wait_for 20 grep -q 'forker: ready' "$T/$name.out"
	spawn_recce "$T/$name.t.out" "$T/$name.t.err" trace --fast -p "$FP" forker:step --return \
		--count 0 --time 600 --limit 100000/1000
	R=$PID
	ok "$name: trace attaches" wait_for 60 grep -q '^recce: tracing' "$T/$name.t.err"
}

# fast_end NAME TRACED DESC: Ctrl-C to the trace; checks its status, what
# it traced (traced's four numbers), that it said nothing was lost, and
# the target's code.
fast_end()
{
	kill -INT "$R"
	wait "$R"
	is "$?" 0 "$1: trace exits 0"
	is "$(traced "$T/$1.t.out")" "$2" "$1: $3"
	unlike "$(cat "$T/$1.t.err")" 'warning' "$1: and nothing said lost or left out" ||
		diag "$(cat "$T/$1.t.err")"
	run python3 tests/cli/code-bytes.py "$FP"
	is "$RC" 0 "$1: the target's code equals its files after the trace" || show_run
	kill_quietly "$FP"
}

# --fast, recce stopped while the family runs: 300 processes through the
# 5 rings recce made, each new process taking over the ring of one that
# exited (forker's _exit, running no exit handler) without recce.
fast_forker fast 150 10
kill -STOP "$R"
kill -USR1 "$FP"
ok "fast: the target forks its 300 processes" wait_for 120 grep -q 'forker: done' "$T/fast.out"
kill -CONT "$R"
fast_end fast "3000 3000 0 300" "every call of every child and grandchild, each with its return, in 300 processes"

# --fast, children that run another program (exec) and live on: 300
# that only fork and exec, more than the 256 entries of recce's
# children's table, then 5 that call once, which recce sees, then exec,
# as many as the rings recce made; then 20 children and grandchildren
# calling. A process that exec'd maps recce's file no more: its entry and
# its ring are taken over, and every call of the later processes is
# traced.
fast_forker fast-exec 10 10 exec
kill -USR1 "$FP"
wait_for 120 grep -q 'forker: called' "$T/fast-exec.out" || diag "forker never called"
ok "fast-exec: recce shows the 5 calls before the execs" \
	wait_for 60 eval '[ "$(grep -c "forker:step/1 --> 0" "$T/fast-exec.t.out")" -ge 5 ]'
kill -USR1 "$FP"
ok "fast-exec: the target forks its 325 processes" wait_for 120 grep -q 'forker: done' "$T/fast-exec.out"
fast_end fast-exec "205 205 0 25" \
	"the 5 calls before the execs and every call of the 20 processes after, with its return"

# A process outside the family running the same program: recce puts no
# breakpoint in it, follows the new processes as it learns of them, and
# says so, naming it.
spawn "$T/o.out" "$TARGETS/forker" 1 1
O=$PID
wait_for 20 grep -q 'forker: ready' "$T/o.out"
kill -USR1 "$P"
trace_forker f2 10 5
run python3 tests/cli/code-bytes.py "$O"
is "$RC" 0 "the outsider's code equals its files while the trace runs" || show_run
kill -USR1 "$P"
ok "the target forks its 20 processes" wait_for 120 grep -q 'forker: done' "$T/f2.out"
kill -INT "$R"
wait "$R"
like "$(cat "$T/f2.t.err")" \
	"20 processes the target created while traced were traced only from when recce read of them, so their first calls may be missing: process $O \\(forker\\), not of the target's family, maps forker too" \
	"recce says the new processes were traced late, naming the outsider and the file"
is "$(grep -c 'unwound' "$T/f2.t.out")" 0 "no call made up as unwound"
kill_quietly "$O" "$P"

done_testing
