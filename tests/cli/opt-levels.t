#!/bin/bash
# The record and trace tests again on targets built at -O0 and -O2 (they
# run at -O1 by default), as uftrace tests its own: a user's program is
# built as it is built, and function names, call counts, arguments and
# return values must hold at every level.
. "$(dirname "$0")/lib.sh"
TESTS="record-pid record-command record-threads record-dwarf record-exit trace-basic trace-more trace-file"
plan $((2 * $(echo $TESTS | wc -w)))

for o in O0 O2; do
	for t in $TESTS; do
		if [ ! -x "$B/targets-$o/calls" ]; then
			fail "$t.t at -$o" "  no targets in $B/targets-$o: run make targets"
			continue
		fi
		TARGETS="$B/targets-$o" bash "$(dirname "$0")/$t.t" > "$T/$t-$o.tap" 2>&1
		is "$?" 0 "$t.t passes with targets built at -$o" ||
			sed 's/^/# /' "$T/$t-$o.tap" | grep -v '^# ok'
	done
done
