#!/usr/bin/env bash
# trace --fast's rings proved against a model: random programs
# (tests/targets/tight: 1-7 threads at once, 1-120,000 numbered calls of
# step(i, t) each), traced from a process with one thread (so 5 rings:
# threads beyond them find none), with recce stopped for 0-400 ms in the
# middle (its rings overflow), written to a trace file or, in half the
# cases, to 2-4 files of 20-420 KiB (about 900-18,000 records) with
# --wrap. Every call must
# be shown once, in order within its thread, or counted: in the "calls
# were not recorded" figure, or among the events --wrap overwrote (the
# newest are kept, as many as recce says): shown plus counted equals made. FAST_MODEL_CASES cases (8 here,
# hundreds in `make soak`), from a seed printed for a rerun
# (FAST_MODEL_SEED).
. "$(dirname "$0")/lib.sh"

need_file "$RECCE" "$TARGETS/tight"
CASES=${FAST_MODEL_CASES:-8}
SEED=${FAST_MODEL_SEED:-$RANDOM}
diag "seed $SEED (FAST_MODEL_SEED=$SEED reruns these cases)"
RANDOM=$SEED

# check FILE THREADS: per thread t, the i of its shown calls only go up;
# prints the number shown, or "bad: ..." for the first one out of order.
check()
{
	awk -v threads="$2" '
	match($0, /tight:step\(i=[0-9]+, t=[0-9]+\)/) {
		split(substr($0, RSTART + 13, RLENGTH - 14), f, /, t=/)
		i = f[1] + 0; t = f[2] + 0
		if (t >= threads || ((t in last) && i <= last[t])) {
			print "bad: call i=" i " of thread " t " after i=" last[t]
			bad = 1
			exit
		}
		last[t] = i; n++
	}
	END { if (!bad) print n + 0 }' "$1"
}

failures=0 lost_cases=0 wrapped_cases=0
for c in $(seq "$CASES"); do
	threads=$((1 + RANDOM % 7))
	case $((RANDOM % 3)) in
	0) calls=$((1 + RANDOM % 1000)) ;;
	1) calls=$((1 + RANDOM % 30000)) ;;
	*) calls=$((60000 + RANDOM * 2 % 60000)) ;;
	esac
	stall=$((RANDOM % 2 * (RANDOM % 400)))
	wrap=
	[ $((RANDOM % 2)) = 1 ] && wrap="$(((20 + RANDOM % 400) * 1024)),$((2 + RANDOM % 3))"
	what="case $c: $threads threads x $calls calls, recce stopped $stall ms${wrap:+, --wrap $wrap}"
	rm -f "$T"/m.trace*
	spawn "$T/tight.out" "$TARGETS/tight" "$calls" "$threads"
	P=$PID
	wait_for 10 grep -q ready "$T/tight.out"
	spawn_recce "$T/m.out" "$T/m.err" trace --fast -p "$P" tight:step --count 0 --limit 0 \
		--time 120 -o "$T/m.trace" ${wrap:+--wrap "$wrap"}
	R=$PID
	if ! wait_for 20 grep -q 'with jumps' "$T/m.err"; then
		failures=$((failures + 1))
		diag "$what: the trace did not start: $(cat "$T/m.err")"
		kill_quietly "$R" "$P"
		continue
	fi
	kill -USR1 "$P"
	if [ "$stall" -gt 0 ]; then
		kill -STOP "$R"
		sleep "0.$(printf '%03d' "$stall")"
		kill -CONT "$R"
	fi
	wait_for 60 grep -q '^done' "$T/tight.out"
	kill -INT "$R"
	wait "$R"
	kill_quietly "$P"
	"$RECCE" replay "$T"/m.trace* >"$T/m.replay" 2>/dev/null
	[ -n "${FAST_MODEL_KEEP:-}" ] && cp "$T/m.replay" "$FAST_MODEL_KEEP.$c"
	shown=$(check "$T/m.replay" "$threads")
	lost=$(sed -n 's/.*warning: \([0-9]*\) calls or returns were not recorded.*/\1/p' "$T/m.err")
	lost=${lost:-0}
	written=$(sed -n 's/.*wrote \([0-9]*\) events to.*/\1/p' "$T/m.err")
	kept=$(sed -n 's/.*the newest \([0-9]*\) are kept.*/\1/p' "$T/m.err")
	overwritten=$((${written:-0} - ${kept:-${written:-0}}))
	[ "$overwritten" -gt 0 ] && wrapped_cases=$((wrapped_cases + 1))
	[ "$lost" -gt 0 ] && lost_cases=$((lost_cases + 1))
	case $shown in
	bad*)
		failures=$((failures + 1))
		diag "$what: $shown"
		;;
	*)
		if [ $((shown + lost + overwritten)) -ne $((threads * calls)) ] ||
			[ "$shown" -ne "${kept:-${written:-0}}" ]; then
			failures=$((failures + 1))
			diag "$what: $shown shown of ${kept:-${written:-0}} kept + $lost not recorded +" \
				"$overwritten overwritten, $((threads * calls)) made"
		fi
		;;
	esac
done
is "$failures" 0 "$CASES random programs: every call shown once, in order, or counted"
diag "$lost_cases of $CASES cases lost calls, $wrapped_cases overwrote some with --wrap (all counted)"

done_testing
