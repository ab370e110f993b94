#!/bin/sh
# recce's demo, run by `make demo` once recce, ratchet and drive are built:
# start the example server ratchet on a free loopback port, drive requests
# at it, record it by PID while it works, then print the report and write
# flame.svg. old_fibonacci, its naive recursive Fibonacci, should dominate
# both. Last, trace a few calls of the /number-info helpers live, with
# their arguments, results and durations. The server is stopped however the
# script ends.
#
# Environment: B (build directory, default build), RECCE (default ./recce),
# FLAME (output SVG, default flame.svg).
set -eu

cd "$(dirname "$0")/.."
B=${B:-build}
RECCE=${RECCE:-./recce}
FLAME=${FLAME:-flame.svg}
PROFILE=$B/demo.pb.gz
LOG=$B/demo-ratchet.log

for f in "$RECCE" "$B/ratchet" "$B/drive"; do
	if [ ! -x "$f" ]; then
		echo "demo: '$f' is missing; run 'make demo' (or 'make all $B/ratchet $B/drive')" >&2
		exit 1
	fi
done

. scripts/ratchet.sh
drive_pid=""
cleanup() {
	if [ -n "$drive_pid" ]; then
		kill "$drive_pid" 2>/dev/null || true
		wait "$drive_pid" 2>/dev/null || true
	fi
	ratchet_stop
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ratchet_start "$LOG"
echo "demo: ratchet (pid $ratchet_pid) listens on 127.0.0.1:$port"

"$B/drive" "$port" 8 3 &
drive_pid=$!
sleep 1 # let the load settle before recording

echo "demo: \$ $RECCE record -p $ratchet_pid -d 4 -o $PROFILE"
"$RECCE" record -p "$ratchet_pid" -d 4 -o "$PROFILE"

# old_fibonacci itself makes about a million calls a request: traced, each
# costs a breakpoint trap, so the helpers of /number-info show better.
echo
echo "demo: \$ $RECCE trace -p $ratchet_pid is_prime collatz_steps --return --count 4"
trace=$("$RECCE" trace -p "$ratchet_pid" is_prime collatz_steps --return --count 4 --time 3 2>&1)
printf '%s\n' "$trace"

wait "$drive_pid" || echo "demo: the load driver failed" >&2
drive_pid=""

echo
echo "demo: \$ $RECCE report $PROFILE -n 15"
report=$("$RECCE" report "$PROFILE" -n 15)
printf '%s\n' "$report"

echo
echo "demo: \$ $RECCE report $PROFILE --flame $FLAME"
"$RECCE" report "$PROFILE" --flame "$FLAME"

case "$report" in
*old_fibonacci*) ;;
*)
	echo "demo: old_fibonacci is missing from the report; something is wrong" >&2
	exit 1
	;;
esac
grep -q 'data-name="old_fibonacci"' "$FLAME" ||
	{ echo "demo: old_fibonacci is missing from $FLAME" >&2 && exit 1; }
case "$trace" in
*"ratchet:is_prime(n="*"ratchet:is_prime/1 --> "*) ;;
*)
	echo "demo: the trace shows no call and return of is_prime; something is wrong" >&2
	exit 1
	;;
esac

case "$FLAME" in
/*) where=$FLAME ;;
*) where=$(pwd)/$FLAME ;;
esac
echo
echo "demo: flamegraph written to $where; open it in a web browser"
echo "demo: (hover for details, click to zoom, Ctrl-F to search)"
