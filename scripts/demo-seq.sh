#!/bin/sh
# recce's sequence demo, run by `make demo-seq`: the seed's three-node
# story. paul computes Fibonacci numbers, john asks paul, the emperor asks
# john; every message carries a librecce sequence token. recce seq reads
# the three running processes and draws the request as a Mermaid
# sequenceDiagram (seq.mmd), then as text. The processes are stopped
# however the script ends.
#
# Environment: B (build directory, default build), RECCE (default ./recce),
# MERMAID (output, default seq.mmd).
set -eu

cd "$(dirname "$0")/.."
B=${B:-build}
RECCE=${RECCE:-./recce}
MERMAID=${MERMAID:-seq.mmd}

for f in "$RECCE" "$B/fibchain"; do
	if [ ! -x "$f" ]; then
		echo "demo-seq: '$f' is missing; run 'make demo-seq'" >&2
		exit 1
	fi
done

pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -f "$B"/demo-seq-*.log
}
trap cleanup EXIT

# start NAME ARGS...: a fibchain in the background; its port in $port.
start() {
	log=$B/demo-seq-$1.log
	"$B/fibchain" serve "$@" > "$log" 2>&1 &
	pids="$pids $!"
	port=""
	i=0
	while [ -z "$port" ] && [ $i -lt 100 ]; do
		port=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$log")
		sleep 0.05
		i=$((i + 1))
	done
	[ -n "$port" ] || { echo "demo-seq: $1 did not start: $(cat "$log")" >&2; exit 1; }
}

start paul 0
paul_port=$port
start john 0 "$paul_port"
john_port=$port
"$B/fibchain" ask emperor "$john_port" 25 > "$B/demo-seq-emperor.log" 2>&1 &
emperor=$!
pids="$pids $emperor"
i=0
until grep -q '^fib' "$B/demo-seq-emperor.log" || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
echo "demo-seq: the emperor asked john, who asked paul: $(cat "$B/demo-seq-emperor.log")"
set -- $pids
echo "demo-seq: \$ $RECCE seq -p $emperor,$2,$1 --mermaid -o $MERMAID"
"$RECCE" seq -p "$emperor,$2,$1" --mermaid -o "$MERMAID"
cat "$MERMAID"
echo "demo-seq: \$ $RECCE seq -p $emperor,$2,$1"
"$RECCE" seq -p "$emperor,$2,$1"
