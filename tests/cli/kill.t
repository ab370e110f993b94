#!/bin/bash
# recce killed with SIGKILL at a random moment of trace, record and top
# (while it attaches, while it runs): the target must run on, not stopped,
# at full speed within a second, and no BPF program, BPF link or uprobe
# of recce's may be left in the kernel. RECCE_KILLS kills per command
# (default 2 here; `make soak` runs 20).
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/spinner"
command -v bpftool >/dev/null 2>&1 || skip_all "bpftool is not installed (Debian package bpftool)"

KILLS=${RECCE_KILLS:-2}
UPROBE_EVENTS=/sys/kernel/tracing/uprobe_events
[ -r "$UPROBE_EVENTS" ] || UPROBE_EVENTS=/sys/kernel/debug/tracing/uprobe_events
EVENTS_BEFORE=$(cat "$UPROBE_EVENTS" 2>/dev/null | wc -l)

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

for cmd in trace trace-events record top; do
	spawn "$T/spin-$cmd.out" "$TARGETS/spinner" 600 2
	TARGET=$PID
	sleep 0.6
	BASE=$(rate_min "$T/spin-$cmd.out" 6)
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
		sleep "$DELAY"
		kill -KILL "$RECCE_PID" 2>/dev/null
		wait "$RECCE_PID" 2>/dev/null
		sleep 1.25
		WHAT="$cmd kill $k (after ${DELAY} s)"
		if ! kill -0 "$TARGET" 2>/dev/null; then
			fail "$WHAT: the target is still running" "it died"
			break
		fi
		STATE=$(awk '{ print $3 }' "/proc/$TARGET/stat")
		isnt "$STATE" T "$WHAT: the target runs, not stopped"
		NOW=$(rate_min "$T/spin-$cmd.out" 4)
		cmp_ok "$NOW" '>=' "$BASE / 10" \
			"$WHAT: at full speed a second later ($NOW against $BASE calls per 50 ms)"
		ok "$WHAT: no BPF program or link of recce's is left" wait_for 2 no_objects
	done
	kill "$TARGET"
done
is "$(cat "$UPROBE_EVENTS" 2>/dev/null | wc -l)" "$EVENTS_BEFORE" "no uprobe was left in $UPROBE_EVENTS"
