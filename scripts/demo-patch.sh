#!/bin/sh
# The fix-it-now demo, run by `make demo-patch`: ratchet serves
# /fibonacci with the slow old_fibonacci; drive measures how many
# requests it answers; recce patch replaces old_fibonacci with
# fast_fibonacci from examples/fast-fibonacci.c in the running server;
# drive measures again; the patch is listed and undone, and drive
# measures once more. The server is stopped however the script ends.
#
# Environment: B (build directory, default build), RECCE (default ./recce).
set -eu

cd "$(dirname "$0")/.."
B=${B:-build}
RECCE=${RECCE:-./recce}
LOG=$B/demo-patch-ratchet.log
FIX=$(pwd)/$B/fast-fibonacci.so

for f in "$RECCE" "$B/ratchet" "$B/drive" "$FIX"; do
	if [ ! -e "$f" ]; then
		echo "demo-patch: '$f' is missing; run 'make demo-patch'" >&2
		exit 1
	fi
done

. scripts/ratchet.sh
trap ratchet_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ratchet_start "$LOG"
echo "demo-patch: ratchet (pid $ratchet_pid) listens on 127.0.0.1:$port"

step() {
	echo
	echo "demo-patch: \$ $*"
	"$@"
}

step "$B/drive" "$port" 3 2
step "$RECCE" patch -p "$ratchet_pid" "old_fibonacci=$FIX:fast_fibonacci"
step "$B/drive" "$port" 3 2
step "$RECCE" patch -p "$ratchet_pid" --list
step "$RECCE" patch -p "$ratchet_pid" --undo old_fibonacci
step "$B/drive" "$port" 3 2
kill -0 "$ratchet_pid" || { echo "demo-patch: ratchet is gone" >&2 && exit 1; }
