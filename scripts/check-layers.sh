#!/bin/sh
# Checks that includes in src/ run downward only: a file may include
# headers of its own folder and of folders in a lower layer, never of a
# folder in its own layer or above, so no two folders can form a circle.
# The layers, lowest first (docs/internals.md says what each holds):
#
#   0 util   1 symbols   2 proc perf   3 profile events inject
#   4 sampling trace top writers patch store dump
#   5 capture continuous remote tasks   6 cli
#
# Prints each offending include and exits 1; prints one line and exits 0
# when the house is in order.
set -eu
cd "$(dirname "$0")/.."

rank()
{
	case "$1" in
	util) echo 0 ;;
	symbols) echo 1 ;;
	proc | perf) echo 2 ;;
	profile | events | inject) echo 3 ;;
	sampling | trace | top | writers | patch | store | dump) echo 4 ;;
	capture | continuous | remote | tasks) echo 5 ;;
	cli) echo 6 ;;
	*) echo -1 ;;
	esac
}

bad=0
files=0
for f in src/*/*.[ch]; do
	files=$((files + 1))
	dir=$(basename "$(dirname "$f")")
	me=$(rank "$dir")
	if [ "$me" -lt 0 ]; then
		echo "check-layers: $f: folder '$dir' has no layer: add it here and to docs/internals.md" >&2
		bad=1
		continue
	fi
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z-]*\)\/[^"]*".*/\1/p' "$f"); do
		[ "$inc" = "$dir" ] && continue
		them=$(rank "$inc")
		if [ "$them" -lt 0 ] || [ "$them" -ge "$me" ]; then
			echo "check-layers: $f ($dir, layer $me) includes $inc/ (layer $them): includes must run downward" >&2
			bad=1
		fi
	done
	if grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]*\.h"' "$f" |
		grep -v -e '"profile\.pb-c\.h"' -e '"agent\.pb-c\.h"' >/dev/null; then
		echo "check-layers: $f: name the folder of every project header (\"util/array.h\")" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] || exit 1
echo "check-layers: $files files, every include runs downward"
