#!/bin/bash
# The kernel-compatibility suite (tests/kernels/compat.sh, which `make
# check-kernels` also runs in a VM on Debian 12's 6.1) on this machine's
# kernel, where every feature it tries must work: so its checks, which
# judge the older kernels, are themselves kept true.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" "$TARGETS/hot" "$TARGETS/calls" "$TARGETS/uv-loop" "$TARGETS/patchee"

RECCE="$RECCE" TARGETS="$TARGETS" bash tests/kernels/compat.sh "$T/compat.txt" 2>"$T/compat.err"
is "$?" 0 "the suite runs to its end" || diag "$(tail -n 5 "$T/compat.err")"
is "$(wc -l <"$T/compat.txt")" 29 "and says a line for each of its 29 features"
while IFS='|' read -r feature status detail; do
	is "$status" works "$(uname -r): $feature ($detail)"
done <"$T/compat.txt"

done_testing
