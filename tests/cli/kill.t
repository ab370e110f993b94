#!/bin/bash
# recce killed with SIGKILL at a random moment of trace, record and top
# (while it attaches, while it runs): the target must run on, not stopped,
# at full speed within a second, with its code equal to its files (no
# breakpoint left: code-bytes.py, which is shown to see one while a trace
# runs), and no BPF program or BPF link of recce's may be left in the
# kernel. RECCE_KILLS kills per command (default 2 here; `make soak` runs
# 20).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/spinner"
command -v bpftool >/dev/null 2>&1 || skip_all "bpftool is not installed (Debian package bpftool)"

KILLS=${RECCE_KILLS:-2}

# recce_objects: BPF programs and uprobe_multi links recce made, still in
# the kernel.
recce_objects()
{
	local progs links
	progs=$(bpftool prog show 2>/dev/null | grep -c 'name recce_hit')
	links=$(bpftool link show 2>/dev/null | grep -c 'uprobe_multi')
	echo $((progs + links))
}

no_objects() { [ "$(recce_objects)" = 0 ]; }

# The check below sees a breakpoint when there is one: while a trace runs,
# the target's code differs from its file; after recce's SIGKILL it is
# equal again.
spawn "$T/spin-see.out" "$TARGETS/spinner" 600 2
TARGET=$PID
wait_for 60 rates_past "$T/spin-see.out" 0 1
for mech in links events; do
	if [ "$mech" = events ]; then
		RECCE_NO_BPF=1 spawn_recce "$T/see.out" "$T/see.err" trace -p "$TARGET" spin_step \
			--return --count 0 --limit 0 --time 0
	else
		spawn_recce "$T/see.out" "$T/see.err" trace -p "$TARGET" spin_step --return \
			--count 0 --limit 0 --time 0
	fi
	RECCE_PID=$PID
	ok "$mech: trace attaches" wait_for 60 grep -q '^recce: tracing' "$T/see.err"
	run python3 tests/cli/code-bytes.py "$TARGET"
	is "$RC" 1 "$mech: while the trace runs, the target's code differs from its file" || show_run
	kill -KILL "$RECCE_PID"
	wait "$RECCE_PID" 2>/dev/null
	ok "$mech: after recce's SIGKILL, it equals its file again" \
		wait_for 60 python3 tests/cli/code-bytes.py "$TARGET"
done
kill "$TARGET"

for cmd in trace trace-events record top; do
	spawn "$T/spin-$cmd.out" "$TARGETS/spinner" 600 2
	TARGET=$PID
	wait_for 60 rates_past "$T/spin-$cmd.out" 0 12
	BASE=$(rate_median "$T/spin-$cmd.out" 6)
	cmp_ok "$BASE" '>' 0 "$cmd: the spinner runs before any recce ($BASE calls per 50 ms)"
	for k in $(seq "$KILLS"); do
		# A moment from 20 ms to 1 s after the start: attaching or running.
		DELAY=$(awk -v s="$RANDOM" 'BEGIN { printf "%.3f", 0.02 + (s % 981) / 1000 }')
		case $cmd in
		trace) spawn_recce "$T/k.out" "$T/k.err" trace -p "$TARGET" spin_step --return \
			--count 0 --limit 0 --time 0 ;;
		trace-events) RECCE_NO_BPF=1 spawn_recce "$T/k.out" "$T/k.err" trace -p "$TARGET" \
			spin_step --count 0 --limit 0 --time 0 ;;
		record) spawn_recce "$T/k.out" "$T/k.err" record -p "$TARGET" -F 999 \
			--call-graph dwarf -o "$T/k.pb.gz" ;;
		top) spawn_recce "$T/k.out" "$T/k.err" top -b -d 0.2 -p "$TARGET" ;;
		esac
		RECCE_PID=$PID
		sleep "$DELAY" # the random moment of the kill, not a wait
		kill -KILL "$RECCE_PID" 2>/dev/null
		wait "$RECCE_PID" 2>/dev/null
		# 25 windows of 50 ms by the target's own clock: its rate a
		# second after the kill.
		KILLED_AT=$(rates "$T/spin-$cmd.out")
		wait_for 120 rates_past "$T/spin-$cmd.out" "$KILLED_AT" 25
		WHAT="$cmd kill $k (after ${DELAY} s)"
		if ! kill -0 "$TARGET" 2>/dev/null; then
			fail "$WHAT: the target is still running" "it died"
			break
		fi
		STATE=$(awk '{ print $3 }' "/proc/$TARGET/stat")
		isnt "$STATE" T "$WHAT: the target runs, not stopped"
		# The median of five windows: a target left slowed (a probe
		# still in, stopped) is slow in every one; a busy machine
		# taking the CPU for a window is not a slowed target.
		NOW=$(rate_median "$T/spin-$cmd.out" 5)
		cmp_ok "$NOW" '>=' "$BASE / 10" \
			"$WHAT: at full speed a second later ($NOW against $BASE calls per 50 ms, the median of 5 windows)"
		ok "$WHAT: no BPF program or link of recce's is left" wait_for 2 no_objects
		run python3 tests/cli/code-bytes.py "$TARGET"
		is "$RC" 0 "$WHAT: the target's code equals its files" || show_run
	done
	kill "$TARGET"
done

done_testing
