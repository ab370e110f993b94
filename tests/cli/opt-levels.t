#!/bin/bash
# The record and trace tests again on targets built at -O0 and -O2 (they
# run at -O1 by default), as uftrace tests its own: a user's program is
# built as it is built, and function names, call counts, arguments and
# return values must hold at every level. (record-threads and record-exit
# check threads' ids and names and a process's exit, which the level does
# not change: they run at -O1 only.)
. "$(dirname "$0")/lib.sh"
TESTS="record-pid record-command record-dwarf trace-basic trace-more trace-file"

for o in O0 O2; do
	if [ ! -x "$B/targets-$o/calls" ]; then
		fail "targets built at -$o" "  no targets in $B/targets-$o: run make targets"
		continue
	fi
	for t in $TESTS; do
		nested "-$o $t.t" "$(dirname "$0")/$t.t" TARGETS="$B/targets-$o"
	done
done
done_testing
